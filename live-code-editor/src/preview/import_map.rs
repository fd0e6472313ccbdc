//! The workspace's import map: a `<script type="importmap">` in the entry document and an
//! `importmap.json` at the workspace root map bare specifiers (`react`, `react-dom/client`,
//! `preact/`) to references, resolved at compile time so a mapped module is a workspace module
//! like any other (in preview and in the standalone export). The compiler installs the only
//! import map the document has, so the person's map never reaches the browser as written.
//!
//! Matching follows the HTML import map rules for `imports`: an exact key first, else the
//! longest key ending in `/` that prefixes the specifier, its target followed by the rest.
//! Targets resolve against the file that declared the map. `scopes` are not applied.

use serde_json::Value;

/// The root file whose `imports` the compiler reads when the entry has no map of its own
/// for a specifier.
pub const IMPORT_MAP_FILE: &str = "importmap.json";

/// Most entries one import map contributes; later ones are ignored (and reported).
pub const MAX_IMPORT_MAP_ENTRIES: usize = 1_000;

/// One map's entries and the workspace file its targets resolve against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct DeclaredMap {
    base: String,
    entries: Vec<(String, String)>,
}

/// The import maps in force for one compile, the entry's before the root file's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ImportMap {
    maps: Vec<DeclaredMap>,
}

/// A specifier the map resolved: the target, and the file it resolves against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MappedSpecifier<'m> {
    pub(crate) target: String,
    pub(crate) base: &'m str,
}

impl ImportMap {
    /// Adds the map `json` declared by the workspace file `base`; maps added earlier win.
    /// Returns why it was not (entirely) taken: not JSON, not an object, or too many entries.
    pub(crate) fn declare(&mut self, base: &str, json: &str) -> Result<(), String> {
        let value: Value = serde_json::from_str(json)
            .map_err(|error| format!("the import map is not valid JSON: {error}"))?;
        let Some(imports) = value.get("imports") else {
            return Ok(());
        };
        let Some(imports) = imports.as_object() else {
            return Err("the import map's \"imports\" is not an object".into());
        };
        let mut entries: Vec<(String, String)> = imports
            .iter()
            .filter_map(|(key, target)| Some((key.clone(), target.as_str()?.to_owned())))
            .take(MAX_IMPORT_MAP_ENTRIES)
            .collect();
        // Longest keys first, so the first prefix match is the most specific one.
        entries.sort_by(|(a, _), (b, _)| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.maps.push(DeclaredMap {
            base: base.to_owned(),
            entries,
        });
        if imports.len() > MAX_IMPORT_MAP_ENTRIES {
            return Err(format!(
                "the import map has {} entries; only the first {MAX_IMPORT_MAP_ENTRIES} are used",
                imports.len()
            ));
        }
        Ok(())
    }

    /// The files that declared a map (a module resolved through them depends on them).
    pub(crate) fn bases(&self) -> impl Iterator<Item = &str> {
        self.maps.iter().map(|map| map.base.as_str())
    }

    /// Resolves a bare `specifier` through the first map that has a match for it.
    pub(crate) fn resolve(&self, specifier: &str) -> Option<MappedSpecifier<'_>> {
        self.maps.iter().find_map(|map| {
            let target = map.entries.iter().find_map(|(key, target)| {
                if key == specifier {
                    return Some(target.clone());
                }
                let rest = specifier.strip_prefix(key.as_str())?;
                (key.ends_with('/') && target.ends_with('/')).then(|| format!("{target}{rest}"))
            })?;
            Some(MappedSpecifier {
                target,
                base: &map.base,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: &str) -> ImportMap {
        let mut map = ImportMap::default();
        map.declare("index.html", json).unwrap();
        map
    }

    #[test]
    fn exact_keys_win_over_prefixes_and_the_longest_prefix_wins() {
        let map = map(
            r#"{"imports":{"react":"./vendor/react.js","react/":"./vendor/react/","react/jsx-runtime":"./vendor/jsx.js","preact/hooks/":"./p/h/"}}"#,
        );
        let target = |specifier| map.resolve(specifier).map(|mapped| mapped.target);
        assert_eq!(target("react").as_deref(), Some("./vendor/react.js"));
        assert_eq!(
            target("react/jsx-runtime").as_deref(),
            Some("./vendor/jsx.js")
        );
        assert_eq!(
            target("react/dom/client.js").as_deref(),
            Some("./vendor/react/dom/client.js")
        );
        assert_eq!(target("preact/hooks/x.js").as_deref(), Some("./p/h/x.js"));
        assert_eq!(target("vue"), None);
        assert_eq!(map.resolve("react").unwrap().base, "index.html");
    }

    #[test]
    fn the_map_declared_first_wins() {
        let mut map = ImportMap::default();
        map.declare("index.html", r#"{"imports":{"a":"./one.js"}}"#)
            .unwrap();
        map.declare(
            IMPORT_MAP_FILE,
            r#"{"imports":{"a":"./two.js","b":"./b.js"}}"#,
        )
        .unwrap();
        assert_eq!(map.resolve("a").unwrap().target, "./one.js");
        let b = map.resolve("b").unwrap();
        assert_eq!((b.target.as_str(), b.base), ("./b.js", IMPORT_MAP_FILE));
        assert_eq!(
            map.bases().collect::<Vec<_>>(),
            ["index.html", IMPORT_MAP_FILE]
        );
    }

    #[test]
    fn a_prefix_key_needs_a_prefix_target() {
        let map = map(r#"{"imports":{"lib/":"./lib.js"}}"#);
        assert_eq!(map.resolve("lib/x.js"), None);
    }

    #[test]
    fn bad_maps_are_refused_with_a_reason() {
        let mut map = ImportMap::default();
        assert!(
            map.declare("index.html", "{")
                .unwrap_err()
                .contains("not valid JSON")
        );
        assert!(
            map.declare("index.html", r#"{"imports":[]}"#)
                .unwrap_err()
                .contains("not an object")
        );
        assert_eq!(map.bases().count(), 0);
        map.declare("index.html", r#"{"scopes":{}}"#).unwrap();
        assert_eq!(map.resolve("x"), None);
    }

    #[test]
    fn entries_stop_at_the_limit() {
        let entries: Vec<String> = (0..=MAX_IMPORT_MAP_ENTRIES)
            .map(|index| format!("\"m{index:05}\":\"./m.js\""))
            .collect();
        let json = format!("{{\"imports\":{{{}}}}}", entries.join(","));
        let mut map = ImportMap::default();
        let error = map.declare("index.html", &json).unwrap_err();
        assert!(error.contains("only the first 1000"), "{error}");
        assert!(map.resolve("m00999").is_some());
        assert!(
            map.resolve(&format!("m{MAX_IMPORT_MAP_ENTRIES:05}"))
                .is_none()
        );
    }
}
