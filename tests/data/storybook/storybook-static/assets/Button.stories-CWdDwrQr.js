const u={title:"Form/Button",argTypes:{label:{control:"text"}}},p=({label:m,primary:n})=>{const a=document.createElement("button");return a.textContent=m,a.style.cssText=`font: 16px sans-serif; padding: 10px 18px; border-radius: 6px;
    border: 1px solid #1d4ed8; background: ${n?"#1d4ed8":"#fff"};
    color: ${n?"#fff":"#1d4ed8"}`,a},r={render:p,args:{label:"Pay now",primary:!0}},e={render:p,args:{label:"Cancel",primary:!1}};var t,o,s;r.parameters={...r.parameters,docs:{...(t=r.parameters)==null?void 0:t.docs,source:{originalSource:`{
  render,
  args: {
    label: "Pay now",
    primary: true
  }
}`,...(s=(o=r.parameters)==null?void 0:o.docs)==null?void 0:s.source}}};var c,d,l;e.parameters={...e.parameters,docs:{...(c=e.parameters)==null?void 0:c.docs,source:{originalSource:`{
  render,
  args: {
    label: "Cancel",
    primary: false
  }
}`,...(l=(d=e.parameters)==null?void 0:d.docs)==null?void 0:l.source}}};const i=["Primary","Secondary"];export{r as Primary,e as Secondary,i as __namedExportsOrder,u as default};
