//! A table's big buffers (its int8 rows, binary codes, ids and norms, and its graph's layer-0
//! links) in 2 MB pages where the system allows.
//!
//! Re-scoring a search's shortlist reads a few hundred rows scattered over tens of megabytes
//! (hundreds at 1M rows): in 4 KB pages nearly every row is a TLB miss as well as a cache
//! miss, and under a hypervisor a miss walks two page tables. Asked for 2 MB pages
//! (`MADV_HUGEPAGE`; most distributions leave transparent huge pages to `madvise`), the same
//! 400 rows out of 77 MB re-scored in 65 µs instead of 120-127 µs on the bench machine. The
//! advice goes on fresh memory, before anything is written to it, because the kernel backs a
//! range with big pages when it first faults it in; advising memory already in small pages
//! only helps once `khugepaged` gets round to it. It is a hint: where it is refused or not
//! Linux, the buffers are plain memory and everything works the same.

/// Below this a buffer grows as any `Vec` does (a few big pages gain nothing).
const MIN_BYTES: usize = 4 << 20;

/// The size of a big page on x86-64 and most aarch64 kernels.
const PAGE: usize = 2 << 20;

/// Make room for `more` items in `v`, as `Vec::reserve` would, but a buffer past [`MIN_BYTES`]
/// moves into fresh memory advised for 2 MB pages before its items are copied in.
pub(super) fn reserve<T: Copy>(v: &mut Vec<T>, more: usize) {
    if v.capacity() - v.len() >= more {
        return;
    }
    let want = (v.len() + more).max(v.capacity() * 2);
    if want.saturating_mul(size_of::<T>()) < MIN_BYTES {
        v.reserve(more);
        return;
    }
    let mut fresh = Vec::with_capacity(want);
    advise(fresh.as_ptr() as usize, fresh.capacity() * size_of::<T>());
    fresh.extend_from_slice(v);
    *v = fresh;
}

/// Ask for 2 MB pages over the whole big pages inside `[start, start + bytes)`.
#[cfg(target_os = "linux")]
fn advise(start: usize, bytes: usize) {
    let from = start.div_ceil(PAGE) * PAGE;
    let to = (start + bytes) / PAGE * PAGE;
    if to > from {
        // SAFETY: the range lies inside an allocation this process owns and holds no data yet;
        // MADV_HUGEPAGE changes how the kernel backs it, never its contents or its mapping.
        // A refusal (no THP, an old kernel) is harmless, so the result is not checked.
        unsafe {
            libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: usize, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growing_past_the_threshold_keeps_every_item_in_order() {
        let mut v: Vec<u64> = Vec::new();
        let n = 3 * MIN_BYTES / size_of::<u64>();
        for i in 0..n as u64 {
            reserve(&mut v, 1);
            v.push(i * 7);
        }
        assert_eq!(v.len(), n);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64 * 7));
        // Doubling, as a Vec grows: far fewer moves than pushes.
        assert!(v.capacity() < 2 * n + MIN_BYTES, "{}", v.capacity());
    }

    #[test]
    fn room_already_there_is_not_moved() {
        let mut v: Vec<i8> = Vec::with_capacity(MIN_BYTES * 2);
        v.extend(std::iter::repeat_n(3i8, MIN_BYTES));
        let at = v.as_ptr();
        reserve(&mut v, 1_000);
        assert_eq!(v.as_ptr(), at);
        // Past the capacity it moves, keeping the items.
        reserve(&mut v, MIN_BYTES * 2);
        assert!(v.capacity() >= MIN_BYTES * 3);
        assert!(v.iter().all(|&x| x == 3));
    }

    #[test]
    fn a_request_bigger_than_doubling_gets_all_it_asked_for() {
        let mut v: Vec<i8> = vec![1; 10];
        reserve(&mut v, MIN_BYTES * 3);
        assert!(v.capacity() >= MIN_BYTES * 3 + 10);
        assert_eq!(v, vec![1; 10]);
    }
}
