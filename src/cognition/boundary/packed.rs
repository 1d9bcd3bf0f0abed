//! The detector state's vectors as stored: each one a base64 string of its f32s' little-endian
//! bytes, not a JSON array of decimals. A state holds two EWMAs and the block rule's last
//! messages, ~8 × 384 numbers: as decimals ~40 KB that every topic-stage turn formatted and wrote
//! (and parsed, when not kept), ~8 % of a turn at 100k memories (docs/architecture.md §9); as
//! base64 ~16 KB, exact to the bit, with no float formatting. The JSON around them stays, so
//! the state reads the same everywhere else (export, a forget's text replacement: base64 holds
//! no words). A state stored before this, with arrays, still loads. Since migration 0024 the
//! store keeps the vectors beside the JSON instead (`store/boundary.rs`), so this form is read
//! from states stored before it and written by [`super::BoundaryState::to_json`] only.

use crate::events::{pack_vector, unpack_vector};
use serde::de::{Deserializer, Error};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// One vector as written: base64.
struct Out<'a>(&'a [f32]);

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&pack_vector(self.0))
    }
}

/// One vector as read: base64, or the array of numbers of a state stored before.
#[derive(Deserialize)]
#[serde(untagged)]
enum In {
    Packed(String),
    Numbers(Vec<f32>),
}

impl In {
    fn vector<E: Error>(self) -> Result<Vec<f32>, E> {
        match self {
            In::Packed(s) => unpack_vector(&s).map_err(|e| E::custom(format!("not a base64 vector: {e}"))),
            In::Numbers(v) => Ok(v),
        }
    }
}

/// `#[serde(with)]` for `Option<Vec<f32>>` (the EWMAs).
pub(super) mod option {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<Vec<f32>>, s: S) -> Result<S::Ok, S::Error> {
        v.as_deref().map(Out).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<f32>>, D::Error> {
        Option::<In>::deserialize(d)?.map(In::vector).transpose()
    }
}

/// `#[serde(with)]` for `Vec<(f32, Vec<f32>)>` (the block rule's weighted messages).
pub(super) mod weighted {
    use super::*;

    pub fn serialize<S: Serializer>(v: &[(f32, Vec<f32>)], s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for (w, e) in v {
            seq.serialize_element(&(w, Out(e)))?;
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(f32, Vec<f32>)>, D::Error> {
        Vec::<(f32, In)>::deserialize(d)?.into_iter().map(|(w, e)| Ok((w, e.vector()?))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(v: &[f32]) -> String {
        pack_vector(v)
    }

    fn decode(s: &str) -> Option<Vec<f32>> {
        unpack_vector(s).ok()
    }

    #[test]
    fn every_bit_comes_back() {
        for n in [0usize, 1, 2, 3, 384] {
            let v: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin() / 3.0).collect();
            let s = encode(&v);
            assert_eq!(s.len(), (4 * n).div_ceil(3) * 4);
            assert_eq!(
                decode(&s).map(|d| d.iter().map(|x| x.to_bits()).collect::<Vec<_>>()),
                Some(v.iter().map(|x| x.to_bits()).collect())
            );
        }
        let odd = [f32::NAN, f32::INFINITY, -0.0, f32::MIN_POSITIVE];
        let back = decode(&encode(&odd)).unwrap();
        assert_eq!(back.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), odd.map(f32::to_bits));
        assert_eq!(encode(&[1.0]), "AACAPw==", "standard base64 of the bytes 00 00 80 3f");
        assert_eq!(decode("AACAP"), None, "not whole f32s");
        assert_eq!(decode("AA\\\"AAA"), None, "not base64");
    }

    #[test]
    fn a_state_stored_with_arrays_still_loads_and_is_written_packed() {
        use super::super::{BoundaryParams, BoundaryState};
        let old = r#"{"msg_count":3,"ewma_fast":[0.5,0.25],"ewma_slow":null,"recent":[[0.75,[1.0,0.0]]],"acc":0.5}"#;
        let s = BoundaryState::from_json(old, BoundaryParams::default()).unwrap();
        assert_eq!(
            (s.msg_count, s.ewma_fast.clone(), s.ewma_slow.clone(), s.recent.clone(), s.acc),
            (3, Some(vec![0.5, 0.25]), None, vec![(0.75, vec![1.0, 0.0])], 0.5)
        );
        let json = s.to_json();
        assert!(
            json.contains(r#""ewma_fast":"AAAAPwAAgD4=""#) && json.contains(r#""recent":[[0.75,"AACAPwAAAAA="]]"#),
            "{json}"
        );
        assert_eq!(BoundaryState::from_json(&json, BoundaryParams::default()), Some(s));
    }
}
