//! Host names in name order, by integer keys.
//!
//! The placement breaks ties between hosts by name, so every update step with caps puts all
//! preferred hosts in name order: at 10,000 hosts a plain sort made about 140,000 string
//! comparisons, each a call to `memcmp` through two pointers, and was the largest single
//! cost of the step. Here each name gets a key, the 8 bytes after the prefix every name
//! shares (cluster host names often share a long one: `ip-10-0-`, `worker-`), read as a
//! big-endian integer, so most comparisons are one integer comparison; equal keys fall back
//! to comparing the names. The order is exactly the names' (`str` order is byte order).

/// The position of each name in name order (`ranks[i]` for `names[i]`). Equal names get
/// distinct, adjacent ranks in an unspecified order.
pub(crate) fn ranks(names: &[&str]) -> Vec<u32> {
    let Some(first) = names.first().map(|n| n.as_bytes()) else {
        return Vec::new();
    };
    let shared = names.iter().fold(first.len(), |len, n| {
        (first[..len].iter().zip(n.as_bytes()))
            .take_while(|(a, b)| a == b)
            .count()
    });
    let mut keyed: Vec<(u64, u32)> = (names.iter().enumerate())
        .map(|(i, n)| (key(&n.as_bytes()[shared..]), i as u32))
        .collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| names[a.1 as usize].cmp(names[b.1 as usize]))
    });
    let mut ranks = vec![0u32; names.len()];
    for (rank, &(_, i)) in keyed.iter().enumerate() {
        ranks[i as usize] = rank as u32;
    }
    ranks
}

/// The first 8 bytes, zero-padded. A shorter name sorts first among names it is a prefix
/// of, and zero padding keeps that (its key is never above theirs); where keys are equal
/// the names are compared.
fn key(bytes: &[u8]) -> u64 {
    let mut k = [0u8; 8];
    let n = bytes.len().min(8);
    k[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(k)
}

#[cfg(test)]
mod tests {
    use super::ranks;

    fn check(names: &[&str]) {
        let got = ranks(names);
        let mut want: Vec<usize> = (0..names.len()).collect();
        want.sort_by(|&a, &b| names[a].cmp(names[b]));
        let mut by_rank = vec![usize::MAX; names.len()];
        for (i, &r) in got.iter().enumerate() {
            by_rank[r as usize] = i;
        }
        let sorted: Vec<&str> = by_rank.iter().map(|&i| names[i]).collect();
        let expected: Vec<&str> = want.iter().map(|&i| names[i]).collect();
        assert_eq!(sorted, expected, "{names:?}");
    }

    /// Shared prefixes, names that are prefixes of others, NUL and non-ASCII bytes, keys that
    /// tie on their 8 bytes.
    #[test]
    fn ranks_follow_the_names_order() {
        check(&[]);
        check(&["nm1"]);
        check(&["nm2", "nm10", "nm1", "nm"]);
        check(&["a", "a\0", "a\0\0", "", "a\0b"]);
        check(&[
            "ip-10-0-12-34.ec2.internal",
            "ip-10-0-12-3.ec2.internal",
            "ip-10-0-12-34.ec2.internal2",
            "ip-10-0-1-200.ec2.internal",
            "ip-10-0-12-34.ec2.interna",
        ]);
        check(&["worker-ü", "worker-u", "worker-z", "worker-é1", "worker-é"]);
        let many: Vec<String> = (0..500)
            .map(|i| format!("host-{}.rack{}.example.com", (i * 7919) % 1000, i % 7))
            .collect();
        check(&many.iter().map(String::as_str).collect::<Vec<_>>());
    }
}
