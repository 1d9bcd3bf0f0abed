use super::*;

#[test]
fn codes_match_sqlite_vec_quantisation() {
    let c = super::super::open_in_memory().unwrap();
    let mut rng = crate::SplitMix64(5);
    for dim in [384, 768, 1024] {
        let v: Vec<f32> = (0..dim).map(|_| rng.next_f64() as f32 - 0.5).collect();
        let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let theirs: Vec<u8> = c.query_row("SELECT vec_quantize_binary(?1)", [blob], |r| r.get(0)).unwrap();
        assert_eq!(theirs, code_bytes(&binary_code(&v)), "{dim}-d");
        let mut back = Vec::new();
        assert!(push_code(&mut back, &theirs, code_words(dim)));
        assert_eq!(back, binary_code(&v));
    }
}

#[test]
fn a_code_has_one_bit_per_dimension_rounded_up_to_whole_words() {
    assert_eq!([384, 768, 1024, 1, 64, 65, 1000, 4096].map(code_words), [6, 12, 16, 1, 1, 2, 16, 64]);
    let v: Vec<f32> = (0..1000).map(|i| if i == 999 { 1.0 } else { -1.0 }).collect();
    let code = binary_code(&v);
    assert_eq!(code.len(), 16);
    assert_eq!(code[15], 1 << (999 % 64), "the last dimension lands in the last word");
    assert_eq!(code_bytes(&code).len(), 128);
    // Codes of another width are never read as this table's.
    assert!(!push_code(&mut Vec::new(), &code_bytes(&code), code_words(384)));
}

#[test]
fn the_fast_paths_agree_with_the_plain_ones() {
    let mut rng = crate::SplitMix64(9);
    let codes: Vec<u64> = (0..6 * 50).map(|_| rng.next_u64()).collect();
    let query: Vec<u64> = (0..6).map(|_| rng.next_u64()).collect();
    assert_eq!(distances(&codes, &query), distances_plain(&codes, &query));
    for dim in [384usize, 13] {
        let q: Vec<f32> = (0..dim).map(|_| rng.next_f64() as f32 - 0.5).collect();
        let row: Vec<i8> = (0..dim).map(|_| (rng.next_u64() % 255) as i8).collect();
        let plain: f32 = q.iter().zip(&row).map(|(a, &b)| a * f32::from(b)).sum();
        assert!((dot_int8(&q, &row) - plain).abs() < 1e-3 * plain.abs().max(1.0), "{dim}-d");
    }
}

#[test]
fn nearest_codes_keeps_the_closest_and_breaks_ties_by_position() {
    let words = code_words(768);
    let q = vec![0u64; words];
    let with_bits = |n: u32| {
        let mut c = vec![0u64; words];
        c[words - 1] = (1u64 << n) - 1;
        c
    };
    let codes: Vec<u64> = [with_bits(5), with_bits(1), with_bits(3), with_bits(1), with_bits(0), with_bits(3)].concat();
    let mut got = nearest_codes(&codes, &q, 4);
    got.sort_unstable();
    assert_eq!(got, [1, 2, 3, 4], "distances 0, 1, 1 and the first 3");
    assert_eq!(nearest_codes(&codes, &q, 10).len(), 6);
    assert!(nearest_codes(&codes, &q, 0).is_empty());
}
