//! `multipart/form-data` bodies (image edits, transcriptions), parsed from
//! the one buffer the request was read into.
//!
//! Each part's data is a [`Bytes`] slice of that buffer, not a copy, and
//! the same slices are handed to the upstream request: a 50 MB upload is
//! held in memory once. Only what the routes need is understood: a part's
//! `name`, its `filename` and its `Content-Type`.

use bytes::Bytes;

/// One part of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormPart {
    pub name: String,
    /// Set for file parts.
    pub filename: Option<String>,
    pub content_type: Option<String>,
    pub data: Bytes,
}

impl FormPart {
    /// A text field's value (a file's bytes are not text).
    pub fn text(&self) -> Option<&str> {
        if self.filename.is_some() {
            return None;
        }
        std::str::from_utf8(&self.data).ok()
    }

    /// A text field made here (the route rewrites `model`, for example).
    pub fn field(name: &str, value: impl Into<String>) -> FormPart {
        FormPart {
            name: name.to_owned(),
            filename: None,
            content_type: None,
            data: Bytes::from(value.into()),
        }
    }
}

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Result<String, String> {
    let mut params = content_type.split(';');
    let essence = params.next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("multipart/form-data") {
        return Err(format!(
            "send this route's body as `multipart/form-data`, not `{essence}`"
        ));
    }
    params
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("boundary"))
        .map(|(_, v)| v.trim().trim_matches('"').to_owned())
        .filter(|b| !b.is_empty() && b.len() <= 200)
        .ok_or_else(|| "the multipart content type has no boundary".to_owned())
}

/// The parts of `body`, in order.
pub fn parse(content_type: &str, body: &Bytes) -> Result<Vec<FormPart>, String> {
    let boundary = boundary(content_type)?;
    let delimiter = format!("--{boundary}");
    let finder = memchr::memmem::Finder::new(delimiter.as_bytes());
    let mut at = finder
        .find(body)
        .ok_or("the multipart body has no part (no boundary found)")?
        + delimiter.len();
    let mut parts = Vec::new();
    loop {
        let rest = &body[at..];
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        let rest = rest
            .strip_prefix(b"\r\n")
            .ok_or("a multipart boundary must be followed by CRLF")?;
        let start = body.len() - rest.len();
        let headers_end = memchr::memmem::find(rest, b"\r\n\r\n")
            .ok_or("a multipart part has no blank line after its headers")?;
        let headers = std::str::from_utf8(&rest[..headers_end])
            .map_err(|_| "multipart part headers must be UTF-8")?;
        let data_start = start + headers_end + 4;
        // The data ends at CRLF followed by the next delimiter.
        let next = finder
            .find(&body[data_start..])
            .ok_or("the multipart body ends without its closing boundary")?
            + data_start;
        let data_end = next
            .checked_sub(2)
            .filter(|&end| end >= data_start && &body[end..next] == b"\r\n")
            .ok_or("a multipart part's data must end with CRLF before the boundary")?;
        parts.push(part(headers, body.slice(data_start..data_end))?);
        at = next + delimiter.len();
    }
}

fn part(headers: &str, data: Bytes) -> Result<FormPart, String> {
    let mut name = None;
    let mut filename = None;
    let mut content_type = None;
    for line in headers.split("\r\n") {
        let Some((header, value)) = line.split_once(':') else {
            continue;
        };
        let header = header.trim();
        if header.eq_ignore_ascii_case("content-disposition") {
            for param in value.split(';').skip(1) {
                let Some((k, v)) = param.trim().split_once('=') else {
                    continue;
                };
                let v = v.trim().trim_matches('"').to_owned();
                match k.trim().to_ascii_lowercase().as_str() {
                    "name" => name = Some(v),
                    "filename" => filename = Some(v),
                    _ => {}
                }
            }
        } else if header.eq_ignore_ascii_case("content-type") {
            content_type = Some(value.trim().to_owned());
        }
    }
    Ok(FormPart {
        name: name.ok_or("a multipart part has no `name` in its Content-Disposition")?,
        filename,
        content_type,
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPE: &str = "multipart/form-data; boundary=XyZ";

    #[test]
    fn parts_are_slices_of_the_body_with_names_files_and_types() {
        let body = Bytes::from_static(
            b"--XyZ\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--\x00\r\n\
--XyZ--\r\n",
        );
        let parts = parse(TYPE, &body).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].name, "model");
        assert_eq!(parts[0].text(), Some("whisper"));
        assert_eq!(parts[1].filename.as_deref(), Some("a.wav"));
        assert_eq!(parts[1].content_type.as_deref(), Some("audio/wav"));
        assert_eq!(&parts[1].data[..], b"RIFF\r\n--\x00");
        assert_eq!(parts[1].text(), None);
        // Not copied: the part points into the body's buffer.
        let inside = body.as_ptr() as usize..body.as_ptr() as usize + body.len();
        assert!(inside.contains(&(parts[1].data.as_ptr() as usize)));
    }

    #[test]
    fn malformed_bodies_and_types_are_refused() {
        assert!(boundary("application/json").is_err());
        assert!(boundary("multipart/form-data").is_err());
        assert_eq!(
            boundary("multipart/form-data; boundary=\"a b\"").unwrap(),
            "a b"
        );
        let unterminated =
            Bytes::from_static(b"--XyZ\r\nContent-Disposition: form-data; name=\"m\"\r\n\r\nx");
        assert!(parse(TYPE, &unterminated).is_err());
        let nameless = Bytes::from_static(b"--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--");
        assert!(parse(TYPE, &nameless).is_err());
        assert!(parse(TYPE, &Bytes::from_static(b"nothing")).is_err());
    }
}
