//! The runtime helpers transformed modules import (`@oxc-project/runtime/helpers/<name>`),
//! provided by the compiler itself as modules of the document's import map, so compiled
//! decorators run in preview and export without a package. Written here, not copied: each is a
//! few lines of well-known semantics (TypeScript's `experimentalDecorators`).

/// The specifier prefix the transform imports helpers under.
pub(crate) const HELPER_SPECIFIER_PREFIX: &str = "@oxc-project/runtime/helpers/";

/// One helper module.
#[derive(Debug)]
pub(crate) struct Helper {
    /// Its name after [`HELPER_SPECIFIER_PREFIX`].
    name: &'static str,
    /// What a module's import list records for it (never a workspace path: NUL-prefixed).
    pub(crate) marker: &'static str,
    /// Its module specifier in the import map.
    pub(crate) specifier: &'static str,
    /// Its source (a default export).
    pub(crate) source: &'static str,
}

/// Applies legacy decorators right to left: a class decorator may replace the class, a member
/// decorator the property descriptor, which is then defined on the target.
const DECORATE: &str = "export default function decorate(decorators, target, key, descriptor) {
  const member = arguments.length > 2;
  let result = member
    ? descriptor === null ? Object.getOwnPropertyDescriptor(target, key) : descriptor
    : target;
  for (let index = decorators.length - 1; index >= 0; index--) {
    const decorator = decorators[index];
    if (!decorator) continue;
    const returned = !member ? decorator(result) : arguments.length > 3 ? decorator(target, key, result) : decorator(target, key);
    result = returned || result;
  }
  if (arguments.length > 3 && result) Object.defineProperty(target, key, result);
  return result;
}
";

/// A parameter decorator as a member decorator that passes the parameter's index.
const DECORATE_PARAM: &str = "export default function decorateParam(index, decorator) {
  return (target, key) => decorator(target, key, index);
}
";

const HELPERS: [Helper; 2] = [
    Helper {
        name: "decorate",
        marker: "\u{0}helper\u{0}decorate",
        specifier: "https://context-action.local/runtime-helper/decorate.js",
        source: DECORATE,
    },
    Helper {
        name: "decorateParam",
        marker: "\u{0}helper\u{0}decorateParam",
        specifier: "https://context-action.local/runtime-helper/decorateParam.js",
        source: DECORATE_PARAM,
    },
];

/// The helper a bare specifier names, if the compiler provides it.
pub(crate) fn helper_for_specifier(specifier: &str) -> Option<&'static Helper> {
    let name = specifier.strip_prefix(HELPER_SPECIFIER_PREFIX)?;
    HELPERS.iter().find(|helper| helper.name == name)
}

/// The helper an import list entry is the marker of.
pub(crate) fn helper_for_marker(entry: &str) -> Option<&'static Helper> {
    HELPERS.iter().find(|helper| helper.marker == entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_helpers_are_found_by_specifier_and_marker_only() {
        let helper = helper_for_specifier("@oxc-project/runtime/helpers/decorate").unwrap();
        assert!(
            helper
                .source
                .starts_with("export default function decorate(")
        );
        assert!(helper_for_marker(helper.marker).is_some());
        assert!(helper_for_specifier("@oxc-project/runtime/helpers/unknown").is_none());
        assert!(helper_for_specifier("decorate").is_none());
        assert!(helper_for_marker("decorate").is_none());
        for helper in &HELPERS {
            assert!(helper.marker.starts_with('\u{0}'), "never a workspace path");
            assert!(!helper.source.contains("</script"));
        }
    }
}
