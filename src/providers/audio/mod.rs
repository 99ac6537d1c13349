//! How long a piece of audio is, for billing transcriptions per second or
//! per minute: from the upstream's report when it gives one, else from the
//! file itself.
//!
//! The file is read where its format gives its length as a decoder plays
//! it: a WAV's samples, an MP3's frames, an Ogg stream's last granule
//! ([`compressed`]). For other compressed formats the gateway asks the
//! upstream for `verbose_json` (see `gateway::media`), and only when
//! nothing at all reports a length is it estimated from the file's size at
//! 128 kbit/s, and the record marked estimated.

mod compressed;

use serde_json::Value;

pub use compressed::{mp3_duration_ms, ogg_duration_ms};

/// Bytes per second assumed for audio whose length nothing reports
/// (128 kbit/s, a common MP3 rate).
const ESTIMATE_BYTES_PER_SECOND: u64 = 16_000;

/// Where a duration came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The upstream's `usage.seconds` or verbose `duration`.
    Upstream,
    /// The last cue of an SRT or WebVTT answer.
    Cues,
    /// The WAV header of the uploaded file.
    WavHeader,
    /// The MP3 frames of the uploaded file, counted.
    Mp3Frames,
    /// The last granule position of the uploaded Ogg stream.
    OggGranule,
    /// The file's size at 128 kbit/s.
    SizeEstimate,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Upstream => "upstream",
            Source::Cues => "cues",
            Source::WavHeader => "wav_header",
            Source::Mp3Frames => "mp3_frames",
            Source::OggGranule => "ogg_granule",
            Source::SizeEstimate => "size_estimate",
        }
    }
}

/// A WAV file's duration in milliseconds, as a decoder plays it: the
/// `data` size (cut to the bytes present, for streamed WAVs whose header
/// says 0xFFFFFFFF) over the rate its samples are read at, sample rate
/// times channels times bytes per sample. The header's own `byte rate`
/// field is not read: a decoder ignores it, so a file could claim a rate
/// 60 times too high and be billed for a sixtieth of what is heard.
/// Only uncompressed formats (PCM, float, A-law, mu-law, and the
/// extensible header) have a length in their header; others give `None`.
pub fn wav_duration_ms(file: &[u8]) -> Option<u64> {
    if file.len() < 12 || &file[..4] != b"RIFF" || &file[8..12] != b"WAVE" {
        return None;
    }
    let u16_at = |at: usize| -> Option<u16> {
        file.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| -> Option<u32> {
        file.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let mut at = 12;
    let mut rate = None;
    while at + 8 <= file.len() {
        let id = &file[at..at + 4];
        let size = u32_at(at + 4)? as usize;
        let body = at + 8;
        match id {
            b"fmt " => {
                rate = decoded_byte_rate(
                    u16_at(body)?,
                    u16_at(body + 2)?,
                    u32_at(body + 4)?,
                    u16_at(body + 14)?,
                )
            }
            b"data" => {
                let present = (file.len() - body).min(size) as u64;
                return rate.map(|rate| present * 1000 / rate);
            }
            _ => {}
        }
        // Chunks are padded to an even size.
        at = body.checked_add(size)?.checked_add(size % 2)?;
    }
    None
}

/// Bytes per second of uncompressed samples, from a `fmt ` chunk's format
/// tag, channels, sample rate and bits per sample.
fn decoded_byte_rate(format: u16, channels: u16, sample_rate: u32, bits: u16) -> Option<u64> {
    const PCM: u16 = 1;
    const FLOAT: u16 = 3;
    const ALAW: u16 = 6;
    const MULAW: u16 = 7;
    const EXTENSIBLE: u16 = 0xFFFE;
    if !matches!(format, PCM | FLOAT | ALAW | MULAW | EXTENSIBLE)
        || channels == 0
        || sample_rate == 0
        || bits == 0
    {
        return None;
    }
    let bytes_per_sample = u64::from(bits).div_ceil(8);
    Some(u64::from(sample_rate) * u64::from(channels) * bytes_per_sample)
}

/// The length the upstream reported: `usage.seconds` (OpenAI's duration
/// usage) or the verbose answer's `duration`, in milliseconds.
pub fn reported_ms(answer: &Value) -> Option<u64> {
    let usage = &answer["usage"];
    let seconds = if usage["type"] == "duration" || usage["seconds"].is_number() {
        usage["seconds"].as_f64()
    } else {
        None
    }
    .or_else(|| answer["duration"].as_f64())
    .or_else(|| answer["duration"].as_str().and_then(|s| s.parse().ok()))?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
}

/// The end of the last cue of an SRT or WebVTT transcript, in
/// milliseconds (`00:01:02,500 --> 00:01:04,000` ends at 64 s).
pub fn last_cue_end_ms(text: &str) -> Option<u64> {
    let line = text.lines().rev().find(|l| l.contains("-->"))?;
    let end = line.split("-->").nth(1)?.split_whitespace().next()?;
    timestamp_ms(end)
}

/// `HH:MM:SS,mmm`, `HH:MM:SS.mmm` or `MM:SS.mmm`.
fn timestamp_ms(stamp: &str) -> Option<u64> {
    let (clock, millis) = stamp.split_once([',', '.']).unwrap_or((stamp, "0"));
    let millis: u64 = millis.parse().ok()?;
    let mut seconds = 0u64;
    for field in clock.split(':') {
        seconds = seconds.checked_mul(60)?.checked_add(field.parse().ok()?)?;
    }
    seconds.checked_mul(1000)?.checked_add(millis)
}

/// The uploaded file's length as its format gives it (WAV, MP3, Ogg), or
/// `None` for a format whose length only a decoder could tell.
pub fn file_duration_ms(file: &[u8]) -> Option<(u64, Source)> {
    wav_duration_ms(file)
        .map(|ms| (ms, Source::WavHeader))
        .or_else(|| ogg_duration_ms(file).map(|ms| (ms, Source::OggGranule)))
        .or_else(|| mp3_duration_ms(file).map(|ms| (ms, Source::Mp3Frames)))
}

/// The file's length estimated from its size.
pub fn estimate_ms(file_len: usize) -> u64 {
    (file_len as u64).saturating_mul(1000) / ESTIMATE_BYTES_PER_SECOND
}

/// A WAV of silence (8 kHz, mono, 16-bit) lasting `ms`: the mock
/// provider's speech, and a fixture for tests.
pub fn silent_wav(ms: u64) -> Vec<u8> {
    let data_len = (ms * 16) as u32; // 8000 samples/s * 2 bytes / 1000
    let mut wav = Vec::with_capacity(44 + data_len as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + data_len).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&16_000u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&2u16.to_le_bytes()); // block align
    wav.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&data_len.to_le_bytes());
    wav.resize(44 + data_len as usize, 0);
    wav
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_wav_header_gives_the_duration() {
        assert_eq!(wav_duration_ms(&silent_wav(2500)), Some(2500));
        let mut cut = silent_wav(2000);
        cut.truncate(44 + 16_000); // half the data arrived
        assert_eq!(wav_duration_ms(&cut), Some(1000));
        assert_eq!(wav_duration_ms(b"ID3\x03 not a wav"), None);
        assert_eq!(wav_duration_ms(b"RIFF\0\0\0\0WAVE"), None);
    }

    #[test]
    fn a_wav_is_timed_by_its_samples_not_its_claimed_byte_rate() {
        let mut lying = silent_wav(60_000);
        // The header's byte rate (offset 28) says 60 times the real one.
        lying[28..32].copy_from_slice(&(16_000u32 * 60).to_le_bytes());
        assert_eq!(wav_duration_ms(&lying), Some(60_000));
        // A compressed format has no length in its header.
        let mut compressed = silent_wav(1000);
        compressed[20..22].copy_from_slice(&0x55u16.to_le_bytes());
        assert_eq!(wav_duration_ms(&compressed), None);
        // No channels: nothing to decode.
        let mut empty = silent_wav(1000);
        empty[22..24].copy_from_slice(&0u16.to_le_bytes());
        assert_eq!(wav_duration_ms(&empty), None);
    }

    #[test]
    fn upstream_reports_and_cues_give_the_duration() {
        assert_eq!(
            reported_ms(&json!({"usage": {"type": "duration", "seconds": 3}})),
            Some(3000)
        );
        assert_eq!(
            reported_ms(&json!({"text": "x", "duration": 12.25})),
            Some(12_250)
        );
        assert_eq!(
            reported_ms(&json!({"text": "x", "usage": {"input_tokens": 5}})),
            None
        );
        let srt =
            "1\n00:00:00,000 --> 00:00:02,000\nhi\n\n2\n00:01:02,500 --> 00:01:04,250\nthere\n";
        assert_eq!(last_cue_end_ms(srt), Some(64_250));
        let vtt = "WEBVTT\n\n00:00.000 --> 00:03.500\nhello\n";
        assert_eq!(last_cue_end_ms(vtt), Some(3500));
        assert_eq!(last_cue_end_ms("no cues"), None);
        assert_eq!(estimate_ms(32_000), 2000);
    }
}
