//! Embedding vectors in session logs, packed as base64 of little-endian `f32`s.
//!
//! A 384-d vector as a JSON number list is ~4 KB and slow to parse; packed it is ~2 KB and
//! loads as one string, which keeps a long session log quick to read back. The round trip
//! is bit-exact, so a rerun sees exactly the vectors the recorded session saw.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A batch of embedding vectors, one per input, in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PackedVectors(pub Vec<Vec<f32>>);

impl Serialize for PackedVectors {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|v| encode(v)))
    }
}

impl<'de> Deserialize<'de> for PackedVectors {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let packed = Vec::<String>::deserialize(d)?;
        packed.iter().map(|s| decode(s).map_err(serde::de::Error::custom)).collect::<Result<_, _>>().map(PackedVectors)
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (with padding) of the vector's little-endian bytes.
pub fn encode(v: &[f32]) -> String {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The inverse of [`encode`]; an error names what is wrong instead of guessing.
pub fn decode(s: &str) -> Result<Vec<f32>, String> {
    let s = s.trim_end_matches('=');
    let mut bytes = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("`{}` is not a base64 character", c as char)),
        };
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits & 0xff) as u8);
        }
    }
    if bytes.len() % 4 != 0 {
        return Err(format!("{} bytes is not a whole number of f32 values", bytes.len()));
    }
    Ok(bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_bit_exactly_through_json() {
        for v in [vec![], vec![1.0f32], vec![0.1, -2.5e-8, f32::MAX], (0..384).map(|i| (i as f32).sin()).collect()] {
            let packed = PackedVectors(vec![v.clone(), v.iter().map(|x| -x).collect()]);
            let json = serde_json::to_string(&packed).unwrap();
            let back: PackedVectors = serde_json::from_str(&json).unwrap();
            assert_eq!(back, packed, "{json}");
        }
    }

    #[test]
    fn matches_standard_base64() {
        // 1.0f32 is 00 00 80 3f.
        assert_eq!(encode(&[1.0]), "AACAPw==");
        assert_eq!(decode("AACAPw==").unwrap(), vec![1.0]);
    }

    #[test]
    fn rejects_damaged_text() {
        assert!(decode("AAC*Pw==").is_err());
        assert!(decode("AACA").is_err(), "3 bytes is not an f32");
    }
}
