// The committed spec, served by this server; "Authorize" takes an API key (bearer) for this page only (not
// persisted: a key kept in localStorage outlives the tab and is readable by any script on this origin);
// "Try it out" calls this server. A file, not an inline script: the page's CSP allows scripts from 'self' only.
window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", persistAuthorization: false, tryItOutEnabled: true });
