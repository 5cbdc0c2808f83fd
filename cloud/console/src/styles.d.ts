// Style sheets are imported for their side effect (esbuild bundles them into the page's CSS).
declare module '*.css'
