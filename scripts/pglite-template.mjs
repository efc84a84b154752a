// Makes the PGlite cluster new data directories start from (once per PGlite version
// and set of migrations; src/store/pglite-template.ts), from the compiled tree in dist/.
const { pgliteTemplatePath, writePgliteTemplate } = await import('../dist/src/store/index.js');
await writePgliteTemplate(await pgliteTemplatePath('dist'));
