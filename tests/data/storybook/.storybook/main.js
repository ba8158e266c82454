/** A small Storybook (HTML, Vite) built once for Viewfinder's tests of `upload --storybook`. */
export default {
  stories: ["../stories/*.stories.js"],
  framework: { name: "@storybook/html-vite", options: {} },
  core: { disableTelemetry: true, disableWhatsNewNotifications: true },
};
