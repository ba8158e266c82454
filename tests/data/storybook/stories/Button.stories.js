export default { title: "Form/Button", argTypes: { label: { control: "text" } } };

const render = ({ label, primary }) => {
  const button = document.createElement("button");
  button.textContent = label;
  button.style.cssText = `font: 16px sans-serif; padding: 10px 18px; border-radius: 6px;
    border: 1px solid #1d4ed8; background: ${primary ? "#1d4ed8" : "#fff"};
    color: ${primary ? "#fff" : "#1d4ed8"}`;
  return button;
};

export const Primary = { render, args: { label: "Pay now", primary: true } };
export const Secondary = { render, args: { label: "Cancel", primary: false } };
