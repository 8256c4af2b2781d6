//! Byte classes as lookup tables, for the scans on every request (a table lookup per byte
//! is cheaper than a set test per byte).

/// The table of the ASCII alphanumerics and `extra`: `table[b]` says whether byte `b` is one.
pub(crate) const fn alphanumerics_and(extra: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        table[extra[i] as usize] = true;
        i += 1;
    }
    table
}

#[cfg(test)]
mod tests {
    #[test]
    fn alphanumerics_and_the_extra_bytes() {
        let table = super::alphanumerics_and(b"-/");
        for b in 0..=255u8 {
            let want = b.is_ascii_alphanumeric() || b == b'-' || b == b'/';
            assert_eq!(table[usize::from(b)], want, "{b:#x}");
        }
    }
}
