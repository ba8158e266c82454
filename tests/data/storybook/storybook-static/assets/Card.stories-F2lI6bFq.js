const i={title:"Layout/Card"},r={render:()=>{const n=document.createElement("article");return n.style.cssText="font: 14px sans-serif; width: 240px; padding: 16px; margin: 8px;border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.2); background: #fff",n.innerHTML="<h2 style='margin:0 0 8px;font-size:18px'>Order #1042</h2><p style='margin:0'>3 items, 42.00 EUR</p>",n}},e={render:()=>{throw new Error("price is undefined")}};var s,a,t;r.parameters={...r.parameters,docs:{...(s=r.parameters)==null?void 0:s.docs,source:{originalSource:`{
  render: () => {
    const card = document.createElement("article");
    card.style.cssText = "font: 14px sans-serif; width: 240px; padding: 16px; margin: 8px;" + "border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.2); background: #fff";
    card.innerHTML = "<h2 style='margin:0 0 8px;font-size:18px'>Order #1042</h2>" + "<p style='margin:0'>3 items, 42.00 EUR</p>";
    return card;
  }
}`,...(t=(a=r.parameters)==null?void 0:a.docs)==null?void 0:t.source}}};var o,d,c;e.parameters={...e.parameters,docs:{...(o=e.parameters)==null?void 0:o.docs,source:{originalSource:`{
  render: () => {
    throw new Error("price is undefined");
  }
}`,...(c=(d=e.parameters)==null?void 0:d.docs)==null?void 0:c.source}}};const p=["Basic","Broken"];export{r as Basic,e as Broken,p as __namedExportsOrder,i as default};
