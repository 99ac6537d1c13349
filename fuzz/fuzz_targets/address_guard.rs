//! Any bytes as IPv4 and IPv6 addresses and as URL text for the
//! request-forgery guard (`net_guard`): it never panics, every IPv6 form
//! that carries an IPv4 address (mapped, NAT64, 6to4, Teredo) is public
//! exactly when that IPv4 address is, IPv4-compatible and local-use NAT64
//! addresses are never public, what the standard library calls private,
//! loopback, link-local or multicast is never public, and a URL the guard
//! accepts never has a private IP literal as its host.
#![no_main]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use libfuzzer_sys::fuzz_target;
use tollgate::base::net_guard::{Embedded, check_url, is_public, private_literal};

/// A public IPv4 address (a Teredo server of the RFC 4380 example).
const TEREDO_SERVER: Ipv4Addr = Ipv4Addr::new(65, 54, 227, 120);

fn v6(bits: u128) -> IpAddr {
    IpAddr::V6(Ipv6Addr::from(bits))
}

/// The IPv6 addresses that lead to `v4`; `filler` fills the bits the form
/// leaves free (6to4 subnet and interface, Teredo flags and port).
fn carriers(v4: Ipv4Addr, filler: u64) -> [IpAddr; 5] {
    let v4 = u128::from(u32::from(v4));
    [
        v6(0xffff << 32 | v4),
        v6(0xffff << 48 | v4),
        v6(0x0064_ff9b << 96 | v4),
        v6(0x2002 << 112 | v4 << 80 | u128::from(filler) & ((1 << 80) - 1)),
        v6(0x2001_0000 << 96
            | u128::from(u32::from(TEREDO_SERVER)) << 64
            | u128::from(filler as u32) << 32
            | (!v4 & 0xffff_ffff)),
    ]
}

fn check_v4(v4: Ipv4Addr, filler: u64) {
    let public = is_public(IpAddr::V4(v4));
    if v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
    {
        assert!(!public, "{v4} passed");
    }
    for carrier in carriers(v4, filler) {
        assert_eq!(is_public(carrier), public, "{carrier} carrying {v4}");
    }
    let bits = u128::from(u32::from(v4));
    assert!(!is_public(v6(bits)), "IPv4-compatible ::{v4} passed");
    let local_nat64 = 0x0064_ff9b_0001u128 << 80 | bits << 8;
    assert!(!is_public(v6(local_nat64)), "local-use NAT64 of {v4} passed");
}

fn check_v6(ip: Ipv6Addr) {
    let public = is_public(IpAddr::V6(ip));
    let first = ip.segments()[0];
    if ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || first & 0xfe00 == 0xfc00
        || first & 0xffc0 == 0xfe80
    {
        assert!(!public, "{ip} passed");
    }
    match Embedded::of(ip) {
        Some(Embedded::Mapped(v4) | Embedded::Nat64(v4) | Embedded::SixToFour(v4)) => {
            assert_eq!(public, is_public(IpAddr::V4(v4)), "{ip} carrying {v4}");
        }
        Some(Embedded::Teredo { server, client }) => {
            let expected = is_public(IpAddr::V4(server)) && is_public(IpAddr::V4(client));
            assert_eq!(public, expected, "Teredo {ip}");
        }
        None => {}
    }
}

fuzz_target!(|data: &[u8]| {
    if let Some(bytes) = data.first_chunk::<16>() {
        check_v6(Ipv6Addr::from(*bytes));
    }
    if let Some(bytes) = data.first_chunk::<4>() {
        let filler = data
            .get(4..12)
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        check_v4(Ipv4Addr::from(*bytes), filler);
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(ip) = text.parse::<IpAddr>() {
        match ip {
            IpAddr::V4(v4) => check_v4(v4, 0),
            IpAddr::V6(v6) => check_v6(v6),
        }
    }
    for url in [
        text.to_owned(),
        format!("http://{text}/"),
        format!("http://[{text}]/hook"),
    ] {
        if let Ok(parsed) = check_url(&url, false) {
            assert!(private_literal(&parsed).is_none(), "{url} passed");
        }
        let _ = check_url(&url, true);
    }
});
