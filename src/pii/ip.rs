//! IP addresses beyond the dotted quad's shape: IPv6 addresses (parsed by
//! the standard library, with a port after them or inside a longer colon
//! run such as a fingerprint), and the dotted quads that name no host: a
//! network written with its prefix length, and a netmask. Split from
//! `detect.rs`, whose scan calls [`ipv6`] and [`names_no_host`].

use super::chars::{word_at, word_before};

/// An IPv6 address: hex digits, colons (at least two) and an optional
/// embedded IPv4, parsed by the standard library.
pub(super) fn ipv6(b: &[u8], i: usize) -> Option<usize> {
    if inside_colon_run(b, i) {
        return None;
    }
    let mut end = i;
    let mut colons = 0;
    while end < b.len() && (b[end].is_ascii_hexdigit() || b[end] == b':' || b[end] == b'.') {
        colons += usize::from(b[end] == b':');
        end += 1;
    }
    if colons < 2 || word_at(b, end) {
        return None;
    }
    let parses = |cut: usize| {
        std::str::from_utf8(&b[i..cut])
            .is_ok_and(|candidate| candidate.parse::<std::net::Ipv6Addr>().is_ok())
    };
    // Sentence punctuation after the address is not part of it.
    for cut in [end, end - 1] {
        if cut <= i {
            break;
        }
        if parses(cut) {
            return Some(cut);
        }
        // A port after all eight groups (`2a01:...:12fd:51544`, a proxy's
        // log): the address ends before it. With `::` the last group
        // could be the address's own, and it parsed whole above.
        if let Some(colon) = port_colon(&b[i..cut]).map(|c| i + c)
            && !b[i..colon].windows(2).any(|w| w == b"::")
            && parses(colon)
        {
            return Some(colon);
        }
    }
    None
}

/// Where the `:port` that ends `run` starts: a colon, then one to five
/// decimal digits up to 65535.
fn port_colon(run: &[u8]) -> Option<usize> {
    let colon = run.iter().rposition(|&c| c == b':')?;
    let port = &run[colon + 1..];
    let value = port.iter().try_fold(0u32, |v, &d| {
        d.is_ascii_digit().then(|| v * 10 + u32::from(d - b'0'))
    });
    ((1..=5).contains(&port.len()) && value.is_some_and(|v| v <= 65535)).then_some(colon)
}

/// Whether `i` follows a group of hex digits and a colon: the tail of a
/// longer colon-separated run (a certificate's fingerprint `3A:9F:...`,
/// read from its ninth-last pair, parses as an IPv6 address). A group
/// glued to a word is a label, not a group (`[IPv6:2001:db8::1]`).
fn inside_colon_run(b: &[u8], i: usize) -> bool {
    if i < 2 || b[i - 1] != b':' {
        return false;
    }
    let hex = b[..i - 1]
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_hexdigit())
        .count();
    let group_start = i - 1 - hex;
    (1..=4).contains(&hex) && (group_start == 0 || !word_before(b, group_start))
}

/// Each dotted group is at most 255, with no leading zero.
pub(super) fn ipv4_octets_valid(digits: &[u8], groups: &[usize]) -> bool {
    let mut k = 0;
    groups.iter().all(|&g| {
        let v = digits[k..k + g]
            .iter()
            .fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
        let leading_zero = g > 1 && digits[k] == b'0';
        k += g;
        v <= 255 && !leading_zero
    })
}

/// Whether the dotted quad of valid octets at `start` names no host: a
/// netmask (`255.255.240.0`: ones, then zeros), or a network written with
/// its prefix length whose host bits are all zero (`10.20.0.0/16`). An
/// interface's address with its prefix (`192.168.4.17/24`) is a host's,
/// and so is a `/32`.
pub(super) fn names_no_host(b: &[u8], start: usize) -> bool {
    let mut value = 0u32;
    let mut octet = 0u32;
    let mut dots = 0;
    let mut p = start;
    while p < b.len() && (b[p].is_ascii_digit() || (b[p] == b'.' && dots < 3)) {
        if b[p] == b'.' {
            value = value << 8 | octet;
            octet = 0;
            dots += 1;
        } else {
            octet = octet * 10 + u32::from(b[p] - b'0');
        }
        p += 1;
    }
    if dots != 3 || octet > 255 {
        return false;
    }
    let value = value << 8 | octet;
    let mask = value >> 24 == 255 && value.leading_ones() + value.trailing_zeros() == 32;
    mask || prefix_after(b, p).is_some_and(|len| len < 32 && value << len == 0)
}

/// The prefix length written after an address ending at `p` (`/16`).
fn prefix_after(b: &[u8], p: usize) -> Option<u32> {
    if b.get(p) != Some(&b'/') {
        return None;
    }
    let digits = b[p + 1..]
        .iter()
        .take(3)
        .take_while(|c| c.is_ascii_digit())
        .count();
    let after = b.get(p + 1 + digits);
    if !(1..=2).contains(&digits) || after.is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
        return None;
    }
    let len = b[p + 1..p + 1 + digits]
        .iter()
        .fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
    (len <= 32).then_some(len)
}
