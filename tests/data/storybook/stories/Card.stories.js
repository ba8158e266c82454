export default { title: "Layout/Card" };

export const Basic = {
  render: () => {
    const card = document.createElement("article");
    card.style.cssText = "font: 14px sans-serif; width: 240px; padding: 16px; margin: 8px;" +
      "border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.2); background: #fff";
    card.innerHTML = "<h2 style='margin:0 0 8px;font-size:18px'>Order #1042</h2>" +
      "<p style='margin:0'>3 items, 42.00 EUR</p>";
    return card;
  },
};

export const Broken = {
  render: () => {
    throw new Error("price is undefined");
  },
};
