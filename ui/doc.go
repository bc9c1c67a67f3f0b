// Package ui is engram's dashboard: static pages (HTML, CSS and JavaScript
// modules, no framework, nothing fetched from elsewhere) embedded in the
// binary and served by engram serve at /ui/. The pages hold no data: the
// browser reads everything through the REST API (/v1/...) with the API key
// the user signs in with, so the files themselves are served without a key
// (http.Mount.Static) under a Content-Security-Policy that lets a page load
// and call only its own origin.
package ui
