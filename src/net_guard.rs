//! Outbound requests to addresses a tenant chose (webhook URLs) must not
//! reach into the operator's own network: no server-side request forgery
//! through the gateway.
//!
//! Two checks, because either alone can be dodged: [`check_url`] refuses a
//! URL whose host is a private, loopback or link-local address (or
//! `localhost`) when it is registered, and [`GuardedResolver`] drops such
//! addresses when a host name is resolved at delivery time, so a name that
//! later resolves to `127.0.0.1` (DNS rebinding) is refused too. Redirects
//! are never followed by the clients that use it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

/// Whether `ip` is an address on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        // Carrier-grade NAT, 100.64.0.0/10.
        || (a == 100 && (64..128).contains(&b))
        // Benchmarking, 198.18.0.0/15; reserved, 240.0.0.0/4.
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique local fc00::/7, link-local fe80::/10, site-local fec0::/10.
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        // Documentation, 2001:db8::/32.
        || (first == 0x2001 && ip.segments()[1] == 0x0db8))
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

/// A resolver that keeps only public addresses.
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

    #[test]
    fn private_and_special_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
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
