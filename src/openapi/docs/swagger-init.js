// Starts Swagger UI on GET /docs with the service's own /openapi.json. A file of its own, not an
// inline script: the Content-Security-Policy allows scripts from this origin only. Addresses are
// relative to the page (…/docs), so they hold where a proxy serves the service under a path.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  // No request to the public validator service: the page talks to this origin only.
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
