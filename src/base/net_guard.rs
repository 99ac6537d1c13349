//! Outbound requests to addresses a tenant chose (webhook URLs, remote
//! images) must not reach into the operator's own network: no server-side
//! request forgery through the gateway.
//!
//! The decision is made on the address actually connected to. A host name
//! is resolved by [`GuardedResolver`], which hands the connector only
//! public addresses, so there is no gap between a check and the connection
//! for a DNS rebinding to use; an IP literal in the URL is never resolved,
//! so [`check_url`] (at registration) and [`private_literal`] (at sending)
//! decide on it, and it is the address connected to. The clients built by
//! [`direct_client`] follow no redirects and use no proxy: a proxy would
//! resolve and connect out of the guard's sight.
//!
//! What is public is decided by [`is_public`]: an IPv4 address outside the
//! special-purpose ranges of [`REFUSED_V4`], an IPv6 address in global
//! unicast (`2000::/3`) outside [`REFUSED_V6`], and an IPv6 address that
//! carries an IPv4 address (mapped, NAT64, 6to4, Teredo) only when the
//! IPv4 address it leads to is public. docs/security.md has the table.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// IPv4 ranges never connected to: the special-purpose registry's ranges
/// that are not globally reachable, and multicast and reserved space.
pub const REFUSED_V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "this network"),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "carrier-grade NAT"),
    (Ipv4Addr::new(127, 0, 0, 0), 8, "loopback"),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "link-local, cloud metadata",
    ),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignments"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved, broadcast"),
];

/// Ranges inside global unicast (`2000::/3`) that are not reachable hosts
/// (everything outside it is refused: loopback, unspecified, IPv4-compatible
/// `::/96`, local-use NAT64 `64:ff9b:1::/48`, discard `100::/64`, unique
/// local, link-local, site-local, multicast).
pub const REFUSED_V6: &[(Ipv6Addr, u8, &str)] = &[
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        23,
        "IETF protocol assignments (Teredo aside)",
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        "documentation",
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        "documentation",
    ),
];

/// An IPv6 address that leads to IPv4 addresses: a packet sent to it ends
/// up at them, so they decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Embedded {
    /// `::ffff:a.b.c.d` (mapped) and `::ffff:0:a.b.c.d` (translated): the
    /// socket speaks IPv4 to the address.
    Mapped(Ipv4Addr),
    /// `64:ff9b::/96`: a NAT64 gateway forwards to the last 32 bits.
    Nat64(Ipv4Addr),
    /// `2002::/16`: 6to4, the IPv4 address in bits 16 to 47.
    SixToFour(Ipv4Addr),
    /// `2001::/32`: Teredo, the server in bits 32 to 63, the client in the
    /// last 32 bits, inverted.
    Teredo { server: Ipv4Addr, client: Ipv4Addr },
}

impl Embedded {
    /// The IPv4 address(es) an IPv6 address leads to, when it is one of
    /// the forms that carry them.
    pub fn of(ip: Ipv6Addr) -> Option<Embedded> {
        let bits = u128::from(ip);
        let low32 = Ipv4Addr::from(bits as u32);
        match ip.segments() {
            [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => {
                Some(Embedded::Mapped(low32))
            }
            [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(Embedded::Nat64(low32)),
            [0x2002, ..] => Some(Embedded::SixToFour(Ipv4Addr::from((bits >> 80) as u32))),
            [0x2001, 0, ..] => Some(Embedded::Teredo {
                server: Ipv4Addr::from((bits >> 64) as u32),
                client: Ipv4Addr::from(!(bits as u32)),
            }),
            _ => None,
        }
    }

    fn is_public(self) -> bool {
        match self {
            Embedded::Mapped(v4) | Embedded::Nat64(v4) | Embedded::SixToFour(v4) => {
                is_public_v4(v4)
            }
            Embedded::Teredo { server, client } => is_public_v4(server) && is_public_v4(client),
        }
    }
}

/// Whether `ip` is an address on the public internet, the only kind a
/// tenant-chosen request may connect to.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match Embedded::of(v6) {
            Some(embedded) => embedded.is_public(),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let bits = u32::from(ip);
    !REFUSED_V4.iter().any(|&(net, len, _)| {
        let mask = u32::MAX << (32 - len);
        bits & mask == u32::from(net)
    })
}

/// A native IPv6 address (no IPv4 inside).
fn is_public_v6(ip: Ipv6Addr) -> bool {
    let bits = u128::from(ip);
    let in_prefix = |net: Ipv6Addr, len: u8| bits & (u128::MAX << (128 - len)) == u128::from(net);
    in_prefix(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3)
        && !REFUSED_V6.iter().any(|&(net, len, _)| in_prefix(net, len))
}

/// A client for requests to tenant-chosen URLs: no redirects, no proxy,
/// and, unless `allow_private` (the operator's opt-out), only public
/// addresses connected to.
pub fn direct_client(allow_private: bool) -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy();
    if allow_private {
        builder
    } else {
        builder.dns_resolver(Arc::new(GuardedResolver))
    }
}

/// Checks a URL a tenant registers: http(s), a host, no credentials in it,
/// and (unless `allow_private`) a host that is not a private address.
pub fn check_url(text: &str, allow_private: bool) -> Result<Url, String> {
    let url = Url::parse(text.trim()).map_err(|e| format!("`{text}` is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("`{text}` must be an http or https URL"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "`{text}` carries credentials; put a token in the path or query instead"
        ));
    }
    let private = match url.host() {
        None => return Err(format!("`{text}` has no host")),
        Some(Host::Ipv4(ip)) => !is_public(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => !is_public(IpAddr::V6(ip)),
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
    };
    if private && !allow_private {
        return Err(format!(
            "`{text}` points at a private, loopback or link-local address; \
             the operator must set webhook_allow_private_targets to allow it"
        ));
    }
    Ok(url)
}

/// The host of `url` when it is an IP literal that is not public (a
/// resolver never sees literals, so the caller checks them).
pub fn private_literal(url: &Url) -> Option<IpAddr> {
    let ip = match url.host()? {
        Host::Ipv4(ip) => IpAddr::V4(ip),
        Host::Ipv6(ip) => IpAddr::V6(ip),
        Host::Domain(_) => return None,
    };
    (!is_public(ip)).then_some(ip)
}

/// The error a refused resolution gives, found again in the error chain to
/// report the delivery as `blocked`.
#[derive(Debug)]
pub struct PrivateTarget(pub String);

impl std::fmt::Display for PrivateTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` resolves only to private addresses", self.0)
    }
}

impl std::error::Error for PrivateTarget {}

/// A resolver that keeps only public addresses: the connector tries only
/// what it returns, so the address connected to is one decided here.
#[derive(Debug, Clone, Copy, Default)]
pub struct GuardedResolver;

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let public: Vec<SocketAddr> = found.filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                return Err(
                    Box::new(PrivateTarget(host)) as Box<dyn std::error::Error + Send + Sync>
                );
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

/// Whether an error came from [`GuardedResolver`] refusing a name.
pub fn is_blocked(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<PrivateTarget>() {
            return true;
        }
        current = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every refused range, by an address inside it (and its edges where
    /// a neighbour is public).
    const REFUSED: &[&str] = &[
        // IPv4
        "0.0.0.0",
        "0.1.2.3",
        "10.1.2.3",
        "100.64.0.1",
        "100.127.255.255",
        "127.0.0.1",
        "127.255.255.254",
        "169.254.169.254",
        "172.16.0.1",
        "172.31.255.255",
        "192.0.0.1",
        "192.0.0.170",
        "192.0.2.1",
        "192.88.99.1",
        "192.168.1.1",
        "198.18.0.1",
        "198.19.255.255",
        "198.51.100.7",
        "203.0.113.7",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        // IPv6 outside global unicast
        "::",
        "::1",
        "100::1",
        "fc00::1",
        "fd12::1",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "ff0e::1",
        "4000::1",
        "5f00::1",
        // IPv6 special inside 2000::/3
        "2001:2::1",
        "2001:10::1",
        "2001:20::1",
        "2001:1ff::1",
        "2001:db8::1",
        "3fff::1",
        // IPv4 inside IPv6: mapped, translated, compatible
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:0:127.0.0.1",
        "::127.0.0.1",
        "::8.8.8.8",
        // NAT64: the well-known prefix decided by the IPv4, the local-use one always
        "64:ff9b::127.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "64:ff9b::10.0.0.1",
        "64:ff9b:1::808:808",
        "64:ff9b:1:ffff::1",
        // 6to4: the IPv4 in bits 16-47
        "2002:7f00:1::1",
        "2002:a9fe:a9fe::",
        "2002:c0a8:101:1::1",
        "2002::1",
        // Teredo: the client is the last 32 bits inverted (127.0.0.1,
        // 192.0.2.45); a private server is refused too
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "2001:0:a00:1:8000:63bf:f7f7:f7f7",
    ];

    const PUBLIC: &[&str] = &[
        "8.8.8.8",
        "1.1.1.1",
        "100.63.255.255",
        "100.128.0.0",
        "172.32.0.1",
        "192.0.1.255",
        "192.0.3.1",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2001:4860:4860::8888",
        "2606:4700::1111",
        "2a00:1450:4001:80b::200e",
        "2001:200::1",
        "::ffff:8.8.8.8",
        "64:ff9b::8.8.8.8",
        "2002:808:808::1",
        "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
    ];

    #[test]
    fn every_refused_range_is_refused_and_public_addresses_pass() {
        for ip in REFUSED {
            assert!(!is_public(ip.parse().unwrap()), "{ip} passed");
        }
        for ip in PUBLIC {
            assert!(is_public(ip.parse().unwrap()), "{ip} was refused");
        }
    }

    #[test]
    fn urls_with_an_embedded_private_ipv4_are_refused() {
        for url in [
            "http://[::ffff:7f00:1]/hook",
            "http://[::127.0.0.1]/hook",
            "http://[64:ff9b::a9fe:a9fe]/latest/meta-data",
            "http://[2002:7f00:1::1]:8080/hook",
            "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook",
            "http://0x7f.1/hook",
            "http://2130706433/hook",
            "http://100.100.100.200/latest/meta-data",
        ] {
            assert!(check_url(url, false).is_err(), "{url}");
            assert!(check_url(url, true).is_ok(), "{url} with the opt-out");
        }
        assert!(check_url("http://[2001:4860:4860::8888]/hook", false).is_ok());
        assert!(check_url("http://[64:ff9b::808:808]/hook", false).is_ok());
    }

    #[test]
    fn urls_are_checked_for_scheme_credentials_and_private_hosts() {
        assert!(check_url("https://hooks.example.com/x?token=1", false).is_ok());
        for bad in [
            "ftp://example.com/",
            "not a url",
            "https://user:pw@example.com/",
            "http://127.0.0.1:9000/hook",
            "http://[::1]/hook",
            "http://localhost/hook",
            "http://api.localhost./hook",
            "http://169.254.169.254/latest/meta-data",
        ] {
            assert!(check_url(bad, false).is_err(), "{bad}");
        }
        assert!(check_url("http://127.0.0.1:9000/hook", true).is_ok());
        assert!(check_url("ftp://127.0.0.1/", true).is_err());
    }

    #[tokio::test]
    async fn the_resolver_refuses_names_of_private_addresses() {
        let name: Name = "localhost".parse().unwrap();
        let error = match GuardedResolver.resolve(name).await {
            Ok(_) => panic!("localhost resolved through the guard"),
            Err(e) => e,
        };
        assert!(is_blocked(error.as_ref()));
    }
}
