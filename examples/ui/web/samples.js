// Sample arguments of the web.* palette, generated from the current workspace view so that every
// sample runs as it is (valid paths, a search text that exists, the current revision).

const HERO_TITLE = /<h1 id="hero-title">([^<]*)<\/h1>/;

function source(workspace, path) {
  return workspace?.files.find((file) => file.path === path)?.source ?? '';
}

/** Arguments for `name` against `workspace` (the web.getWorkspace view) and the open `path`. */
export function sampleArguments(name, workspace, path = 'index.html') {
  const expectedRevision = workspace?.revision;
  switch (name) {
    case 'web.getWorkspace':
      return {};
    case 'web.readFile':
      return { path };
    case 'web.applyPatch': {
      const title = HERO_TITLE.exec(source(workspace, 'index.html'))?.[1] || 'Code the page';
      return { path: 'index.html', search: title, replace: `${title}, live`, occurrence: 'first', expectedRevision };
    }
    case 'web.writeFile':
      return { path, source: source(workspace, path), expectedRevision };
    case 'web.setTheme':
      return { theme: 'amber', expectedRevision };
    case 'web.addFeature':
      return { title: 'Acknowledged', description: 'Each revision is confirmed by the sandboxed preview.', expectedRevision };
    case 'web.updateHero':
      return { title: 'Hello from the palette', subtitle: 'Changed through web.updateHero.', expectedRevision };
    default:
      return {};
  }
}
