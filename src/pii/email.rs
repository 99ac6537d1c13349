//! E-mail addresses: a local part, an `@` and a host with a top-level
//! domain; an image asset's name (`logo@2x.png`) is not one, nor a login
//! on a machine (`ssh ops@db-3.example.org`, `git@host:repo.git`, a host
//! under a domain no mail reaches). Split from `detect.rs`, whose scan
//! calls [`emails`].

use super::chars::{word_at, word_before};
use super::detect::{Kind, Span};

pub(super) fn emails(b: &[u8], out: &mut Vec<Span>) {
    let local = |c: u8| c.is_ascii_alphanumeric() || b"._%+-".contains(&c);
    let domain = |c: u8| c.is_ascii_alphanumeric() || c == b'.' || c == b'-';
    for at in memchr::memchr_iter(b'@', b) {
        let mut start = at;
        while start > 0 && local(b[start - 1]) {
            start -= 1;
        }
        while start < at && b[start] == b'.' {
            start += 1;
        }
        if start == at || (start > 0 && word_before(b, start)) {
            continue;
        }
        let mut end = at + 1;
        while end < b.len() && domain(b[end]) {
            end += 1;
        }
        while end > at + 1 && matches!(b[end - 1], b'.' | b'-') {
            end -= 1;
        }
        if word_at(b, end) {
            continue;
        }
        let host = &b[at + 1..end];
        let Some(dot) = host.iter().rposition(|&c| c == b'.') else {
            continue;
        };
        let tld = &host[dot + 1..];
        if dot == 0 || tld.len() < 2 || !tld.iter().all(u8::is_ascii_alphabetic) {
            continue;
        }
        if is_file_name(host, tld) || is_login(b, start, end, tld) {
            continue;
        }
        out.push(Span {
            start,
            end,
            kind: Kind::Email,
        });
    }
}

/// File-name extensions that are no top-level domain: `logo@2x.png`,
/// `icon@3x.webp` are image assets, not addresses (extensions that are
/// also domains, `.zip`, `.mov`, `.md`, `.py`, `.sh`, `.rs`, are not here).
const FILE_EXTENSIONS: &[&[u8]] = &[
    b"png", b"jpg", b"jpeg", b"gif", b"svg", b"webp", b"bmp", b"tif", b"tiff", b"ico", b"heic",
    b"avif", b"pdf", b"css", b"scss", b"js", b"mjs", b"cjs", b"ts", b"tsx", b"jsx", b"json",
    b"html", b"htm", b"xml", b"yaml", b"yml", b"toml", b"txt", b"csv", b"xlsx", b"xls", b"docx",
    b"doc", b"pptx", b"mp3", b"mp4", b"wav", b"ogg", b"webm", b"woff", b"woff2", b"ttf", b"otf",
    b"eot", b"lock", b"log", b"wasm", b"apk", b"dmg", b"tgz", b"tar", b"gz", b"xz", b"zst", b"rar",
    b"iso", b"bak", b"tmp", b"sql", b"dwg", b"dxf", b"stl", b"psd",
];

/// Whether the host of an `@` is a file name: its last label a file
/// extension, or its first an asset scale (`@2x`, `@3x`), a drawing's
/// scale or a date (`plan@1-50.pdf`, `dump@2025-01-31.tar`: digits and
/// hyphens, which no mail domain's first label is alone).
fn is_file_name(host: &[u8], tld: &[u8]) -> bool {
    let scale = host.len() > 3
        && host[0].is_ascii_digit()
        && host[1].eq_ignore_ascii_case(&b'x')
        && host[2] == b'.';
    let first = host.split(|&c| c == b'.').next().unwrap_or_default();
    let dated = first.contains(&b'-') && first.iter().all(|c| c.is_ascii_digit() || *c == b'-');
    scale
        || dated
        || FILE_EXTENSIONS
            .iter()
            .any(|ext| tld.eq_ignore_ascii_case(ext))
}

/// Top-level domains that are never delegated, used for machines on a
/// private network (`.lan`, `.internal`, mDNS's `.local`, `home.arpa`):
/// no mail reaches an address there, so `user@host` names a login.
const PRIVATE_DOMAINS: &[&[u8]] = &[
    b"lan",
    b"local",
    b"localdomain",
    b"internal",
    b"intranet",
    b"intern",
    b"corp",
    b"home",
    b"arpa",
];

/// Commands that log in to a machine as `user@host`.
const LOGIN_COMMANDS: &[&[u8]] = &[b"ssh", b"scp", b"sftp", b"mosh", b"ssh-copy-id"];

/// Whether `b[start..end]`, an `@` address, is a login on a machine: a
/// host followed by `:` and a path (`git@host:team/repo.git`, scp), a
/// host under a private top-level domain, or the argument of a login
/// command (`ssh -p 2222 ops@host`; its options may come between).
fn is_login(b: &[u8], start: usize, end: usize, tld: &[u8]) -> bool {
    let path = b.get(end) == Some(&b':')
        && b.get(end + 1)
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"/~.".contains(c));
    if path || PRIVATE_DOMAINS.iter().any(|d| tld.eq_ignore_ascii_case(d)) {
        return true;
    }
    // The tokens before the address on its line, nearest first: a
    // command, options and their values (`ssh -i key ops@host`).
    let mut end = start;
    let mut after_option_value = false;
    for _ in 0..6 {
        while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        let mut from = end;
        while from > 0 && !b[from - 1].is_ascii_whitespace() {
            from -= 1;
        }
        let token = &b[from..end];
        if token.is_empty() {
            return false;
        }
        // A token that is no option may be the value of the option before
        // it, not a command's argument ("per ssh an admin@..." is mail).
        if LOGIN_COMMANDS.contains(&token) {
            return !after_option_value;
        }
        let option = token.starts_with(b"-");
        if !option && after_option_value {
            return false;
        }
        after_option_value = !option;
        end = from;
    }
    false
}
