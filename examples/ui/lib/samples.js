// Sample tools/call arguments derived from a tool's canonical input schema and the current
// workspace (active path, revision), for the catalog's Run sample editor.

function resolve(schema, root) {
  if (schema?.$ref?.startsWith('#/')) {
    const target = schema.$ref.slice(2).split('/').reduce((node, key) => node?.[key], root);
    return resolve(target, root);
  }
  return schema ?? {};
}

function typeOf(schema) {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  return type ?? (schema.enum ? typeof schema.enum[0] : undefined);
}

function sampleValue(name, schema, root, context) {
  const resolved = resolve(schema, root);
  if (resolved.allOf?.length === 1) return sampleValue(name, resolved.allOf[0], root, context);
  const variants = resolved.oneOf ?? resolved.anyOf;
  if (variants) {
    const concrete = variants.map((variant) => resolve(variant, root)).find((variant) => variant.type !== 'null');
    return sampleValue(name, concrete ?? {}, root, context);
  }
  if (resolved.const !== undefined) return resolved.const;
  if (resolved.enum) return resolved.enum[0];
  if (resolved.default !== undefined && resolved.default !== null) return resolved.default;
  if (name === 'expectedRevision') return context.revision;
  if (name === 'path' || name === 'fromPath') return context.activePath ?? 'index.html';
  if (name === 'toPath') return 'renamed.html';
  switch (typeOf(resolved)) {
    case 'integer':
    case 'number': return resolved.minimum ?? 0;
    case 'boolean': return false;
    case 'array': return [];
    case 'object': return {};
    default: return name === 'source' ? '' : `sample ${name}`;
  }
}

/** Sample arguments: every required property plus expectedRevision when the tool accepts it. */
export function sampleArguments(tool, context) {
  const schema = tool.inputSchema ?? {};
  const properties = schema.properties ?? {};
  const wanted = new Set(schema.required ?? []);
  if ('expectedRevision' in properties) wanted.add('expectedRevision');
  const args = {};
  for (const name of Object.keys(properties)) {
    if (wanted.has(name)) args[name] = sampleValue(name, properties[name], schema, context);
  }
  return args;
}
