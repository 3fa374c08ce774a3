// Renders the reference of the page's API version (body[data-spec-url]) with
// the Swagger UI bundle served beside this file. No online validator: the
// page loads nothing from anywhere but this service.
'use strict';
window.ui = window.SwaggerUIBundle({
  url: document.body.dataset.specUrl,
  dom_id: '#swagger-ui',
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  deepLinking: true,
  validatorUrl: null,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  showExtensions: false,
  tryItOutEnabled: false,
});
