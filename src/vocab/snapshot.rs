//! A JSON audit snapshot that is written out only when someone reads it.
//!
//! The router's signal and weight snapshots are for the audit row and the `routed` event, yet
//! building them as `serde_json::Value` trees was almost all of `route`'s time, on the path to
//! the first token. The router keeps the plain structs behind an [`Arc`]; the tree is built
//! once, on first read (the row write or the log writer), and every clone shares it. It
//! serialises as, compares as and dereferences to that tree, so the row and the event carry
//! exactly the bytes they did when it was built eagerly.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Something that can write its audit snapshot.
pub trait ToSnapshot: Send + Sync {
    fn to_snapshot(&self) -> Value;
}

/// An audit snapshot, built on first read; see the module documentation.
#[derive(Clone)]
pub struct LazyJson {
    source: Option<Arc<dyn ToSnapshot>>,
    built: Arc<OnceLock<Value>>,
    /// The tree written out, for the audit row; like the tree, built once and shared.
    text: Arc<OnceLock<String>>,
}

impl LazyJson {
    /// A snapshot that is built already (read back from a log or a row).
    pub fn ready(value: Value) -> LazyJson {
        LazyJson { source: None, built: Arc::new(OnceLock::from(value)), text: Arc::default() }
    }

    /// A snapshot of `source`, written on first read.
    pub fn deferred(source: Arc<dyn ToSnapshot>) -> LazyJson {
        LazyJson { source: Some(source), built: Arc::new(OnceLock::new()), text: Arc::default() }
    }

    /// The JSON tree (built now if nobody has read it yet).
    pub fn value(&self) -> &Value {
        self.built.get_or_init(|| self.source.as_ref().map_or(Value::Null, |s| s.to_snapshot()))
    }

    /// The tree as JSON text (written now if nobody has asked yet). A turn asks for it on the
    /// vector search thread while the reply is planned (`Turn::deliver`), so the commit finds
    /// the audit row's text ready instead of building, copying and writing out the tree.
    pub fn text(&self) -> &str {
        self.text.get_or_init(|| self.value().to_string())
    }

    /// Whether the tree has been built (for tests of the laziness itself).
    pub fn is_built(&self) -> bool {
        self.built.get().is_some()
    }
}

impl Deref for LazyJson {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl From<Value> for LazyJson {
    fn from(value: Value) -> LazyJson {
        LazyJson::ready(value)
    }
}

impl From<LazyJson> for Value {
    fn from(lazy: LazyJson) -> Value {
        lazy.value().clone()
    }
}

impl PartialEq for LazyJson {
    fn eq(&self, other: &LazyJson) -> bool {
        self.value() == other.value()
    }
}

impl PartialEq<Value> for LazyJson {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl PartialEq<LazyJson> for Value {
    fn eq(&self, other: &LazyJson) -> bool {
        self == other.value()
    }
}

impl fmt::Debug for LazyJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

impl fmt::Display for LazyJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.value(), f)
    }
}

impl Serialize for LazyJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(s)
    }
}

impl<'de> Deserialize<'de> for LazyJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LazyJson, D::Error> {
        Value::deserialize(d).map(LazyJson::ready)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Counted(std::sync::atomic::AtomicUsize);

    impl ToSnapshot for Counted {
        fn to_snapshot(&self) -> Value {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            json!({"b": 1, "a": [n]})
        }
    }

    #[test]
    fn builds_once_on_first_read_and_clones_share_it() {
        let src = Arc::new(Counted(0.into()));
        let lazy = LazyJson::deferred(src.clone());
        let copy = lazy.clone();
        assert!(!lazy.is_built());
        assert_eq!(copy["a"][0], 0);
        assert!(lazy.is_built());
        assert_eq!(lazy["a"][0], 0);
        assert_eq!(src.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn the_text_is_the_tree_written_out_once_for_every_clone() {
        let src = Arc::new(Counted(0.into()));
        let lazy = LazyJson::deferred(src.clone());
        let copy = lazy.clone();
        let beside = std::thread::spawn(move || copy.text().to_string()).join().unwrap();
        assert_eq!(beside, r#"{"a":[0],"b":1}"#);
        assert_eq!(lazy.text(), beside);
        assert_eq!(lazy.text(), lazy.value().to_string());
        assert_eq!(src.0.load(std::sync::atomic::Ordering::SeqCst), 1, "built once, on the other thread");
        assert_eq!(LazyJson::ready(json!([1, "x"])).text(), r#"[1,"x"]"#);
    }

    #[test]
    fn serialises_as_the_tree_and_reads_back_equal() {
        let lazy = LazyJson::deferred(Arc::new(Counted(0.into())));
        let text = serde_json::to_string(&lazy).unwrap();
        assert_eq!(text, serde_json::to_string(&json!({"a": [0], "b": 1})).unwrap());
        let back: LazyJson = serde_json::from_str(&text).unwrap();
        assert_eq!(back, lazy);
        assert_eq!(back, json!({"a": [0], "b": 1}));
    }
}
