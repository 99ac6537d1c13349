//! The length of compressed audio, read from the file as a decoder reads
//! it: MP3 by walking its frames, Ogg (Opus, Vorbis) by the granule
//! position of its pages.
//!
//! A transcription priced by duration is billed from what the upstream
//! reports; these are the fallback when it reports nothing, so that a
//! file is billed for the audio actually forwarded rather than estimated
//! from its size. Neither trusts a header that only claims a length: MP3
//! frames are counted one by one (a Xing/Info "length" frame is a frame
//! like the others), and an Ogg stream's length is where its decoder stops.

/// Samples per frame and sample rate of a valid MPEG audio frame header,
/// with the frame's length in bytes.
struct Frame {
    samples: u32,
    sample_rate: u32,
    len: usize,
}

/// Bitrates in kbit/s by [version group][layer - 1][index]; index 0 (free
/// format) and 15 (invalid) are refused before the lookup.
const BITRATES: [[[u16; 15]; 3]; 2] = [
    // MPEG-1: layers I, II, III.
    [
        [
            0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448,
        ],
        [
            0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384,
        ],
        [
            0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
        ],
    ],
    // MPEG-2 and 2.5: layer I, then II and III alike.
    [
        [
            0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256,
        ],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
        [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160],
    ],
];

/// Reads a frame header at the start of `bytes`.
fn frame_at(bytes: &[u8]) -> Option<Frame> {
    let header = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?);
    if header >> 21 != 0x7FF {
        return None;
    }
    let version = (header >> 19) & 0b11; // 0: 2.5, 2: 2, 3: 1
    let layer = match (header >> 17) & 0b11 {
        0b11 => 1,
        0b10 => 2,
        0b01 => 3,
        _ => return None,
    };
    let bitrate_index = ((header >> 12) & 0xF) as usize;
    let rate_index = ((header >> 10) & 0b11) as usize;
    let padding = ((header >> 9) & 1) as usize;
    if version == 1 || bitrate_index == 0 || bitrate_index == 15 || rate_index == 3 {
        return None;
    }
    let mpeg1 = version == 3;
    let sample_rate = [44_100, 48_000, 32_000][rate_index]
        >> match version {
            3 => 0,
            2 => 1,
            _ => 2,
        };
    let kbps = u32::from(BITRATES[usize::from(!mpeg1)][layer - 1][bitrate_index]);
    let bitrate = kbps * 1000;
    let (samples, len) = match layer {
        1 => (384, (12 * bitrate / sample_rate) as usize * 4 + padding * 4),
        2 => (1152, (144 * bitrate / sample_rate) as usize + padding),
        _ if mpeg1 => (1152, (144 * bitrate / sample_rate) as usize + padding),
        _ => (576, (72 * bitrate / sample_rate) as usize + padding),
    };
    (len >= 4).then_some(Frame {
        samples,
        sample_rate,
        len,
    })
}

/// Past an ID3v2 tag at the start, if there is one.
fn after_id3v2(file: &[u8]) -> usize {
    if file.len() < 10 || &file[..3] != b"ID3" {
        return 0;
    }
    let size = file[6..10]
        .iter()
        .fold(0usize, |n, b| (n << 7) | usize::from(b & 0x7F));
    let footer = if file[5] & 0x10 != 0 { 10 } else { 0 };
    10 + size + footer
}

/// An MP3 (any MPEG audio layer) file's length in milliseconds: every
/// frame is counted, as a decoder plays it. A frame that starts where the
/// previous one ended counts; after junk, the stream is resynchronised the
/// way decoders do it: a frame header counts only when another header
/// follows it (or the file ends with it), so a stray sync pattern in junk
/// does not add length. `None` when no two frames are found (not an MP3).
pub fn mp3_duration_ms(file: &[u8]) -> Option<u64> {
    let mut at = after_id3v2(file);
    let mut micros: u64 = 0;
    let mut frames = 0u32;
    let mut rate = None;
    let mut locked = false;
    while at + 4 <= file.len() {
        let confirmed = frame_at(&file[at..]).filter(|frame| {
            let next = at + frame.len;
            locked
                || next == file.len()
                || (next + 4 <= file.len() && frame_at(&file[next..]).is_some())
                // A frame before a trailing ID3v1 tag.
                || file.get(next..next + 3) == Some(b"TAG".as_slice())
        });
        match confirmed {
            Some(frame) if rate.is_none_or(|r| r == frame.sample_rate) => {
                rate = Some(frame.sample_rate);
                micros += u64::from(frame.samples) * 1_000_000 / u64::from(frame.sample_rate);
                frames += 1;
                at += frame.len;
                locked = true;
            }
            _ => {
                at += 1;
                locked = false;
            }
        }
    }
    (frames >= 2).then_some(micros / 1000)
}

/// An Ogg stream's length in milliseconds: the largest granule position of
/// its pages over the codec's rate (Opus: 48 kHz less the pre-skip;
/// Vorbis: the identification header's rate). `None` for other codecs or
/// a file that is not Ogg.
pub fn ogg_duration_ms(file: &[u8]) -> Option<u64> {
    let mut at = 0;
    let mut codec: Option<(u64, u64)> = None; // (rate, pre-skip)
    let mut last_granule: u64 = 0;
    while at + 27 <= file.len() {
        if &file[at..at + 4] != b"OggS" {
            return None;
        }
        let granule = u64::from_le_bytes(file[at + 6..at + 14].try_into().ok()?);
        let segments = usize::from(file[at + 26]);
        let table = file.get(at + 27..at + 27 + segments)?;
        let body_len: usize = table.iter().map(|&n| usize::from(n)).sum();
        let body = at + 27 + segments;
        if codec.is_none() {
            let packet = file.get(body..body + body_len)?;
            codec = if packet.starts_with(b"OpusHead") && packet.len() >= 12 {
                Some((
                    48_000,
                    u64::from(u16::from_le_bytes([packet[10], packet[11]])),
                ))
            } else if packet.len() >= 16 && packet[0] == 1 && &packet[1..7] == b"vorbis" {
                let rate = u32::from_le_bytes(packet[12..16].try_into().ok()?);
                Some((u64::from(rate), 0))
            } else {
                return None;
            };
        }
        // -1 marks a page on which no packet ends.
        if granule != u64::MAX {
            last_granule = last_granule.max(granule);
        }
        at = body + body_len;
    }
    let (rate, pre_skip) = codec?;
    if rate == 0 {
        return None;
    }
    Some(last_granule.saturating_sub(pre_skip).saturating_mul(1000) / rate)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An MPEG-1 layer III frame at 128 kbit/s, 44.1 kHz, no padding: 417
    /// bytes, 1152 samples (26.12 ms).
    pub fn mp3_frame() -> Vec<u8> {
        let mut frame = vec![0xFF, 0xFB, 0x90, 0x00];
        frame.resize(417, 0);
        frame
    }

    pub fn mp3_of(frames: usize) -> Vec<u8> {
        (0..frames).flat_map(|_| mp3_frame()).collect()
    }

    #[test]
    fn an_mp3_is_timed_by_its_frames() {
        // 1,000 frames of 1152 samples at 44.1 kHz: 26.122 s.
        assert_eq!(mp3_duration_ms(&mp3_of(1000)), Some(26_122));
        // An ID3v2 tag in front and an ID3v1 tag behind change nothing.
        let mut tagged = b"ID3\x04\x00\x00\x00\x00\x00\x0A".to_vec();
        tagged.extend_from_slice(&[0; 10]);
        tagged.extend(mp3_of(1000));
        tagged.extend_from_slice(b"TAG");
        tagged.resize(tagged.len() + 125, b' ');
        assert_eq!(mp3_duration_ms(&tagged), Some(26_122));
    }

    #[test]
    fn junk_between_mp3_frames_neither_hides_nor_adds_audio() {
        // Junk after every tenth frame: a decoder resynchronises and plays
        // all 1,000 frames, so they are all counted.
        let mut file = Vec::new();
        for i in 0..1000 {
            file.extend(mp3_frame());
            if i % 10 == 9 {
                file.extend_from_slice(&[0x12, 0xFF, 0xFB, 0x34, 0x56]);
            }
        }
        assert_eq!(mp3_duration_ms(&file), Some(26_122));
        assert_eq!(mp3_duration_ms(b"not audio at all"), None);
        assert_eq!(mp3_duration_ms(&mp3_frame()), None, "one frame is no MP3");
    }

    #[test]
    fn mpeg2_layer3_frames_have_576_samples() {
        // MPEG-2 layer III, 64 kbit/s, 22.05 kHz: 72 * 64000 / 22050 = 208.
        let mut frame = vec![0xFF, 0xF3, 0x80, 0x00];
        frame.resize(208, 0);
        let file: Vec<u8> = (0..100).flat_map(|_| frame.clone()).collect();
        // 100 * 576 / 22050 s = 2.612 s.
        assert_eq!(mp3_duration_ms(&file), Some(2_612));
    }

    /// One Ogg page with one packet.
    fn ogg_page(granule: u64, packet: &[u8]) -> Vec<u8> {
        let mut page = b"OggS\x00\x00".to_vec();
        page.extend_from_slice(&granule.to_le_bytes());
        page.extend_from_slice(&[0; 12]); // serial, sequence, checksum
        let mut lacing = vec![255u8; packet.len() / 255];
        lacing.push((packet.len() % 255) as u8);
        page.push(lacing.len() as u8);
        page.extend(lacing);
        page.extend_from_slice(packet);
        page
    }

    #[test]
    fn an_ogg_stream_is_timed_by_its_last_granule() {
        let mut head = b"OpusHead\x01\x02".to_vec();
        head.extend_from_slice(&312u16.to_le_bytes()); // pre-skip
        head.extend_from_slice(&[0; 7]);
        let mut opus = ogg_page(0, &head);
        opus.extend(ogg_page(0, b"OpusTags"));
        opus.extend(ogg_page(48_000 + 312, &[1; 300]));
        opus.extend(ogg_page(u64::MAX, &[1; 10]));
        opus.extend(ogg_page(96_000 + 312, &[1; 300]));
        assert_eq!(ogg_duration_ms(&opus), Some(2_000));

        let mut vorbis_id = vec![1u8];
        vorbis_id.extend_from_slice(b"vorbis");
        vorbis_id.extend_from_slice(&[0, 0, 0, 0, 2]);
        vorbis_id.extend_from_slice(&44_100u32.to_le_bytes());
        vorbis_id.extend_from_slice(&[0; 14]);
        let mut vorbis = ogg_page(0, &vorbis_id);
        vorbis.extend(ogg_page(441_000, &[1; 50]));
        assert_eq!(ogg_duration_ms(&vorbis), Some(10_000));
        assert_eq!(ogg_duration_ms(b"OggS but cut"), None);
        assert_eq!(ogg_duration_ms(&mp3_of(3)), None);
    }
}
