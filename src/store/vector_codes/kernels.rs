//! The inner loops of vector search. Each is written once as plain Rust in a shape the
//! compiler vectorises, and compiled twice: for the baseline x86-64 target (SSE2, which lacks
//! the popcount instruction and fused multiply-add) and with AVX2, FMA and POPCNT, picked per
//! call by runtime detection (a cached atomic load). The batch is the unit of dispatch, so the
//! check is paid once per list or candidate set, never per row.

/// Whether this CPU runs the AVX2/FMA/POPCNT builds.
#[cfg(target_arch = "x86_64")]
fn fast() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("fma")
        && std::arch::is_x86_feature_detected!("popcnt")
}

/// Calls `$plain(args…)`, through `$fast` (the same body compiled for AVX2/FMA/POPCNT) where
/// the CPU has them.
macro_rules! dispatch {
    ($fast:ident, $plain:ident, $($arg:expr),*) => {{
        #[cfg(target_arch = "x86_64")]
        if fast() {
            // SAFETY: the CPU has every instruction `$fast` is compiled for.
            return unsafe { $fast($($arg),*) };
        }
        $plain($($arg),*)
    }};
}

#[inline(always)]
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Replace `out` with the Hamming distance of every code in `codes` (`query.len()` words each)
/// to `query`, in order. A distance past `u16::MAX` (codes over 1,023 words) reads as `u16::MAX`.
pub fn hamming_all(codes: &[u64], query: &[u64], out: &mut Vec<u16>) {
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if query.len() == 6 && popcount512() {
        // SAFETY: the CPU has every instruction `hamming6_avx512` is compiled for.
        return unsafe { hamming6_avx512(codes, query, out) };
    }
    dispatch!(hamming_all_fast, hamming_all_plain, codes, query, out)
}

/// Whether this CPU has AVX-512's 64-bit popcount and byte permutes ([`hamming6_avx512`]).
#[cfg(target_arch = "x86_64")]
fn popcount512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
}

/// [`hamming_all_plain`] for 6-word (384-d) codes, eight rows (six registers) at a time: the
/// popcount of each word, its eight counts packed to bytes, each row's six bytes gathered into
/// one 8-byte lane and summed there. 0.44 ms for 450k rows against the scalar loop's 0.89 on
/// one core (docs/architecture.md §9).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq,avx512vbmi,popcnt")]
unsafe fn hamming6_avx512(codes: &[u64], query: &[u64], out: &mut Vec<u16>) {
    use std::arch::x86_64::*;
    let rows = codes.len() / 6;
    let whole = rows / 8 * 8;
    out.resize(whole, 0);
    // Word j of eight rows' 48 words is XORed with query word j % 6; the pattern repeats every
    // three registers.
    let mut words = [0u64; 24];
    for (j, w) in words.iter_mut().enumerate() {
        *w = query[j % 6];
    }
    // Byte 8r + k of the gathered register is row r's word k (k < 6), else byte 63: zero, as
    // the packed register's last lane is zero-extended (a cast would leave it undefined).
    let mut gather = [63u8; 64];
    for (t, g) in gather.iter_mut().enumerate() {
        if t % 8 < 6 {
            *g = (6 * (t / 8) + t % 8) as u8;
        }
    }
    // SAFETY: unaligned loads of 64 bytes from arrays of 192 and 64 bytes.
    let (q0, q1, q2, gather) = unsafe {
        let q = words.as_ptr().cast::<__m512i>();
        (
            _mm512_loadu_si512(q),
            _mm512_loadu_si512(q.add(1)),
            _mm512_loadu_si512(q.add(2)),
            _mm512_loadu_si512(gather.as_ptr().cast()),
        )
    };
    for (block, dist) in codes[..whole * 6].chunks_exact(48).zip(out.chunks_exact_mut(8)) {
        // SAFETY: `block` is 48 words, six unaligned 64-byte loads.
        let [c0, c1, c2, c3, c4, c5] = unsafe {
            let p = block.as_ptr().cast::<__m512i>();
            [0, 1, 2, 3, 4, 5].map(|i| _mm512_loadu_si512(p.add(i)))
        };
        let bytes = |a: __m512i, b: __m512i, q: __m512i, r: __m512i| {
            _mm_unpacklo_epi64(
                _mm512_cvtepi64_epi8(_mm512_popcnt_epi64(_mm512_xor_si512(a, q))),
                _mm512_cvtepi64_epi8(_mm512_popcnt_epi64(_mm512_xor_si512(b, r))),
            )
        };
        let (b01, b23, b45) = (bytes(c0, c1, q0, q1), bytes(c2, c3, q2, q0), bytes(c4, c5, q1, q2));
        let packed = _mm512_inserti32x4::<2>(_mm512_inserti32x4::<1>(_mm512_zextsi128_si512(b01), b23), b45);
        let sums = _mm512_sad_epu8(_mm512_permutexvar_epi8(gather, packed), _mm512_setzero_si512());
        // SAFETY: `dist` is eight u16s, one 16-byte store.
        unsafe { _mm_storeu_si128(dist.as_mut_ptr().cast(), _mm512_cvtepi64_epi16(sums)) };
    }
    hamming_rows::<6>(&codes[whole * 6..rows * 6], query, out);
}

#[inline(always)]
fn hamming_all_plain(codes: &[u64], query: &[u64], out: &mut Vec<u16>) {
    // The usual code sizes get a loop whose row length the compiler knows, so each row is a
    // straight run of loads, XORs and popcounts: a 450k-row scan at 384-d took 2.1 ms through
    // the generic loop, 0.9 ms this way (docs/architecture.md §9).
    match query.len() {
        6 => hamming_rows::<6>(codes, query, out),
        12 => hamming_rows::<12>(codes, query, out),
        16 => hamming_rows::<16>(codes, query, out),
        words => out.extend(codes.chunks_exact(words.max(1)).map(|c| hamming(c, query).min(u16::MAX.into()) as u16)),
    }
}

/// [`hamming_all_plain`] for codes of `W` words (`query.len() == W`; at most 1,023, so a
/// distance fits in 16 bits).
#[inline(always)]
fn hamming_rows<const W: usize>(codes: &[u64], query: &[u64], out: &mut Vec<u16>) {
    let mut q = [0u64; W];
    q.copy_from_slice(&query[..W]);
    out.extend(codes.chunks_exact(W).map(|c| {
        let mut d = 0;
        for (x, y) in c.iter().zip(&q) {
            d += (x ^ y).count_ones();
        }
        d as u16
    }));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn hamming_all_fast(codes: &[u64], query: &[u64], out: &mut Vec<u16>) {
    hamming_all_plain(codes, query, out)
}

/// Replace `out` with the positions of the distances in `dist` at or below `bound`, in order:
/// the rows a cut-off picks. They are a few hundred of tens of thousands, scattered, so taking
/// them one by one mispredicts a branch at nearly every pick (30 µs of a 65k-row part's 38 µs
/// selection on the 1M store's codes); AVX-512 moves each 32 rows' picked positions into place
/// with no branch (4 µs).
pub fn within(dist: &[u16], bound: u16, out: &mut Vec<u32>) {
    out.clear();
    #[cfg(target_arch = "x86_64")]
    if compress512() {
        // SAFETY: the CPU has every instruction `within_avx512` is compiled for.
        return unsafe { within_avx512(dist, bound, out) };
    }
    dispatch!(within_fast, within_plain, dist, bound, out)
}

/// Whether this CPU compares 16-bit lanes into a mask and compresses by one ([`within_avx512`]).
#[cfg(target_arch = "x86_64")]
fn compress512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw")
}

#[inline(always)]
fn within_plain(dist: &[u16], bound: u16, out: &mut Vec<u32>) {
    const BLOCK: usize = 32;
    for (b, block) in dist.chunks(BLOCK).enumerate() {
        // A block none of whose rows is picked is passed over with one vector comparison.
        if block.iter().fold(false, |any, &d| any | (d <= bound)) {
            let picked = block.iter().enumerate().filter(|&(_, &d)| d <= bound);
            out.extend(picked.map(|(j, _)| (b * BLOCK + j) as u32));
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn within_fast(dist: &[u16], bound: u16, out: &mut Vec<u32>) {
    within_plain(dist, bound, out)
}

/// [`within`] 32 rows at a time: one comparison gives each row's bit, and each half's picked
/// positions are compressed to the front of a register that is stored whole at the end of
/// `out`. The stores run up to 16 positions past it, into room kept spare.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn within_avx512(dist: &[u16], bound: u16, out: &mut Vec<u32>) {
    use std::arch::x86_64::*;
    const SPARE: usize = 32;
    let whole = dist.len() / 32 * 32;
    let bounds = _mm512_set1_epi16(bound as i16);
    let sixteen = _mm512_set1_epi32(16);
    let mut at = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let mut len = out.len();
    for rows in dist[..whole].chunks_exact(32) {
        if out.capacity() - len < SPARE {
            // SAFETY: the first `len` positions were written below.
            unsafe { out.set_len(len) };
            out.reserve(SPARE.max(len));
        }
        // SAFETY: `rows` is 32 u16s, one unaligned 64-byte load; each store writes 16 u32s at
        // `len`, and at least SPARE (twice that) are spare from `len` on.
        unsafe {
            let picked = _mm512_cmple_epu16_mask(_mm512_loadu_si512(rows.as_ptr().cast()), bounds);
            let (low, high) = (picked as u16, (picked >> 16) as u16);
            let p = out.as_mut_ptr();
            _mm512_storeu_si512(p.add(len).cast(), _mm512_maskz_compress_epi32(low, at));
            len += low.count_ones() as usize;
            _mm512_storeu_si512(p.add(len).cast(), _mm512_maskz_compress_epi32(high, _mm512_add_epi32(at, sixteen)));
            len += high.count_ones() as usize;
        }
        at = _mm512_add_epi32(at, _mm512_add_epi32(sixteen, sixteen));
    }
    // SAFETY: the first `len` positions were written above.
    unsafe { out.set_len(len) };
    out.extend((whole..dist.len()).filter(|&j| dist[j] <= bound).map(|j| j as u32));
}

/// The dot product of `q` with an int8 row, in sixteen lanes so that it compiles to vector
/// instructions (one running sum is a chain the compiler may not reorder).
#[inline(always)]
fn dot_int8_plain(q: &[f32], row: &[i8]) -> f32 {
    let mut lanes = [0f32; 16];
    let (qc, rc) = (q.chunks_exact(16), row.chunks_exact(16));
    let tail: f32 = qc.remainder().iter().zip(rc.remainder()).map(|(a, &b)| a * f32::from(b)).sum();
    for (qs, rs) in qc.zip(rc) {
        for ((lane, a), &b) in lanes.iter_mut().zip(qs).zip(rs) {
            *lane += a * f32::from(b);
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The dot product of `q` with one int8 row.
pub fn dot_int8(q: &[f32], row: &[i8]) -> f32 {
    dispatch!(dot_int8_fast, dot_int8_plain, q, row)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn dot_int8_fast(q: &[f32], row: &[i8]) -> f32 {
    dot_int8_plain(q, row)
}

/// The dot product of two int8 rows, in integers (exact; the graph compares rows with each other).
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    dispatch!(dot_i8_fast, dot_i8_plain, a, b)
}

#[inline(always)]
fn dot_i8_plain(a: &[i8], b: &[i8]) -> i32 {
    // i16 products summed in i32 lanes: the shape AVX2's multiply-add of 16-bit pairs takes.
    a.iter().zip(b).map(|(&x, &y)| i32::from(i16::from(x) * i16::from(y))).sum()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn dot_i8_fast(a: &[i8], b: &[i8]) -> i32 {
    dot_i8_plain(a, b)
}

/// `q` against each of `rows` (`q.len()` bytes each) at the positions `at`: the dot products, in order.
pub fn dots_int8(q: &[f32], rows: &[i8], at: &[u32]) -> Vec<f32> {
    dispatch!(dots_int8_fast, dots_int8_plain, q, rows, at)
}

/// How many candidates ahead of the one being scored have their row requested from memory.
/// The candidates are scattered over the table (38 MB of rows at 100k), so each row is a cache
/// miss; asking for the next rows while this one is scored overlaps the misses instead of
/// waiting for each in turn.
const PREFETCH_AHEAD: usize = 8;

#[inline(always)]
fn dots_int8_plain(q: &[f32], rows: &[i8], at: &[u32]) -> Vec<f32> {
    let d = q.len();
    let row = |p: u32| &rows[p as usize * d..(p as usize + 1) * d];
    at.iter()
        .enumerate()
        .map(|(i, &p)| {
            if let Some(&ahead) = at.get(i + PREFETCH_AHEAD) {
                prefetch(row(ahead));
            }
            dot_int8_plain(q, row(p))
        })
        .collect()
}

/// Ask for `bytes`' cache lines without waiting for them (a hint: it changes no result).
#[inline(always)]
fn prefetch(bytes: &[i8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch never faults, whatever the address; SSE is part of x86-64.
        #[allow(unused_unsafe)]
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line.as_ptr())
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn dots_int8_fast(q: &[f32], rows: &[i8], at: &[u32]) -> Vec<f32> {
    dots_int8_plain(q, rows, at)
}

#[cfg(test)]
#[inline(always)]
fn dot_f32_plain(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 16];
    let (ac, bc) = (a.chunks_exact(16), b.chunks_exact(16));
    let tail: f32 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (xs, ys) in ac.zip(bc) {
        for ((lane, x), y) in lanes.iter_mut().zip(xs).zip(ys) {
            *lane += x * y;
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// The dot product of two float vectors.
#[cfg(test)]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    dispatch!(dot_f32_fast, dot_f32_plain, a, b)
}

#[cfg(all(test, target_arch = "x86_64"))]
#[target_feature(enable = "avx2,fma,popcnt")]
unsafe fn dot_f32_fast(a: &[f32], b: &[f32]) -> f32 {
    dot_f32_plain(a, b)
}

/// The plain builds, for checking the fast ones against.
#[cfg(test)]
pub(super) mod plain {
    pub fn hamming_all(codes: &[u64], query: &[u64]) -> Vec<u16> {
        let mut out = Vec::new();
        super::hamming_all_plain(codes, query, &mut out);
        out
    }
    pub fn dot_int8(q: &[f32], row: &[i8]) -> f32 {
        super::dot_int8_plain(q, row)
    }
    pub fn within(dist: &[u16], bound: u16) -> Vec<u32> {
        let mut out = Vec::new();
        super::within_plain(dist, bound, &mut out);
        out
    }
}
