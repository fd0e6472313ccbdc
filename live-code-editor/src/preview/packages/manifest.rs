//! The parts of a `package.json` resolution reads. `exports` keeps its key order: conditions
//! are tried in the order the package wrote them, which a sorted map would lose.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

/// A package's manifest, as far as resolution needs it.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Manifest {
    #[serde(default, deserialize_with = "lenient_string")]
    pub(crate) module: Option<String>,
    #[serde(default, deserialize_with = "browser_field")]
    pub(crate) browser: Browser,
    #[serde(default, deserialize_with = "lenient_string")]
    pub(crate) main: Option<String>,
    #[serde(default)]
    pub(crate) exports: Option<Exports>,
}

impl Manifest {
    /// Parses `text`; `None` when it is not a JSON object.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let text = text.trim_start_matches('\u{feff}').trim_start();
        // A derived struct also reads a JSON array (field by field): only an object is one.
        text.starts_with('{')
            .then(|| serde_json::from_str(text).ok())
            .flatten()
    }
}

/// An `exports` value: a target path, a fallback list, or a map of subpaths or conditions in
/// written order. Anything else (numbers, booleans) is `Null`, which matches nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exports {
    Target(String),
    Null,
    List(Vec<Exports>),
    Map(Vec<(String, Exports)>),
}

impl<'de> Deserialize<'de> for Exports {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ExportsVisitor)
    }
}

struct ExportsVisitor;

impl<'de> Visitor<'de> for ExportsVisitor {
    type Value = Exports;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a package.json exports value")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Exports, E> {
        Ok(Exports::Target(value.to_owned()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Exports, E> {
        Ok(Exports::Null)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Exports, E> {
        Ok(Exports::Null)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Exports, E> {
        Ok(Exports::Null)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Exports, E> {
        Ok(Exports::Null)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Exports, E> {
        Ok(Exports::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Exports, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Exports::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Exports, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Exports::Map(entries))
    }
}

/// The `browser` field: a string is the browser entry; an object replaces files of the package
/// (`"./lib/node.js": "./lib/browser.js"`) or modules it imports (`"fs": false`), `false` meaning
/// an empty module.
#[derive(Debug, Default)]
pub(crate) struct Browser {
    pub(crate) entry: Option<String>,
    pub(crate) replacements: Vec<(String, Option<String>)>,
}

fn browser_field<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<Browser, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(entry) => Browser {
            entry: Some(entry),
            replacements: Vec::new(),
        },
        serde_json::Value::Object(map) => Browser {
            entry: None,
            replacements: map
                .into_iter()
                .filter_map(|(key, value)| match value {
                    serde_json::Value::String(target) => Some((key, Some(target))),
                    serde_json::Value::Bool(false) => Some((key, None)),
                    _ => None,
                })
                .collect(),
        },
        _ => Browser::default(),
    })
}

/// A string field, or `None` when it is absent or of another type (packages in the wild put
/// objects in `browser` and arrays in `main`; neither should make the manifest unreadable).
fn lenient_string<'de, D: de::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(value) => Some(value),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_keep_the_order_the_package_wrote() {
        let manifest = Manifest::parse(
            r#"{"name":"p","browser":{"./a.js":false},"exports":{".":{"import":"./i.mjs","browser":"./b.js","default":null},"./x/*":["./x/*.js"]}}"#,
        )
        .unwrap();
        assert_eq!(
            manifest.browser.entry, None,
            "the object form is not an entry"
        );
        assert_eq!(manifest.browser.replacements, [("./a.js".to_owned(), None)]);
        let Some(Exports::Map(subpaths)) = manifest.exports else {
            panic!("a subpath map");
        };
        let keys: Vec<&str> = subpaths.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(keys, [".", "./x/*"]);
        let Exports::Map(conditions) = &subpaths[0].1 else {
            panic!("a condition map");
        };
        let conditions: Vec<&str> = conditions.iter().map(|(key, _)| key.as_str()).collect();
        assert_eq!(conditions, ["import", "browser", "default"]);
    }

    #[test]
    fn a_manifest_that_is_no_object_is_none() {
        assert!(Manifest::parse("[1]").is_none());
        assert!(Manifest::parse("{").is_none());
    }
}
