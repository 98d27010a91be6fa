//! Where a JSON string ends: the one question the scan asks of most of a transcript's bytes.
//!
//! Three twins answer it with one signature, and a test holds each of them equal to the plain
//! one on random strings: [`avx2::string_end`], 64 bytes at a time (the escaped bytes of a block
//! found at once, as simdjson does), [`sse2::string_end`], 16 at a time (every x86_64 CPU has
//! SSE2), and [`plain::string_end`], a byte at a time, which also reads the last bytes of a text
//! for the other two. [`string_end`] picks the widest the CPU has.

#[cfg(target_arch = "x86_64")]
mod avx2;
mod plain;
#[cfg(target_arch = "x86_64")]
mod sse2;

/// The widest twin every CPU of the target has.
#[cfg(not(target_arch = "x86_64"))]
use plain::string_end as narrow;
#[cfg(target_arch = "x86_64")]
use sse2::string_end as narrow;

/// The closing quote of a string whose contents start at `start`, and whether it holds escapes;
/// `None` at a control character, a bad escape, a surrogate escape or the end of the text.
pub fn string_end(bytes: &[u8], start: usize) -> Option<(usize, bool)> {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: `is_x86_feature_detected!("avx2")` just said the CPU has AVX2.
        return unsafe { avx2::string_end(bytes, start) };
    }
    narrow(bytes, start)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`string_end`] or one of its twins.
    type Reader = fn(&[u8], usize) -> Option<(usize, bool)>;

    /// Every twin this CPU can run, by name, the plain one among them.
    fn twins() -> Vec<(&'static str, Reader)> {
        let mut twins: Vec<(&'static str, Reader)> =
            vec![("string_end", string_end), ("plain", plain::string_end)];
        #[cfg(target_arch = "x86_64")]
        {
            twins.push(("sse2", sse2::string_end));
            if std::is_x86_feature_detected!("avx2") {
                // SAFETY: only pushed, and so only called, when the CPU has AVX2.
                twins.push(("avx2", |bytes, start| unsafe {
                    avx2::string_end(bytes, start)
                }));
            } else {
                eprintln!("no AVX2 on this CPU: its twin cannot run here");
            }
        }
        twins
    }

    /// A random string's contents and closing quote (most run long, past several blocks, and
    /// hold escapes, good and bad; only good ones if `valid`), and a place to start reading it.
    fn random_string(rng: &mut fastrand::Rng, valid: bool) -> (Vec<u8>, usize) {
        let pieces: [&[u8]; 12] = [
            b"\\",
            b"\"",
            b"\\\\",
            b"\\n",
            b"\\\"",
            b"\\u00e9",
            b"\\ud800",
            b"\\x",
            b"\x01",
            b"abc",
            b"\xc3\xa9",
            b"\\u12",
        ];
        let mut text = Vec::new();
        while text.len() < rng.usize(..400) {
            if rng.usize(..4) == 0 {
                let piece = pieces[rng.usize(..pieces.len())];
                // Most strings run long: a closing quote comes rarely.
                if piece != b"\"" || rng.usize(..8) == 0 {
                    text.extend_from_slice(piece);
                }
            } else {
                let run = rng.usize(..80);
                text.extend(std::iter::repeat_n(b'x', run));
            }
        }
        if valid {
            // Mostly valid strings: drop the pieces serde refuses.
            text.retain(|&b| b >= 0x20);
        }
        text.push(b'"');
        let start = rng.usize(..text.len().min(70) + 1);
        (text, start)
    }

    #[test]
    fn strings_end_where_a_byte_by_byte_reading_ends_them() {
        let mut rng = fastrand::Rng::with_seed(0x6a09_e667_f3bc_c908u64);
        for round in 0..20_000 {
            let (text, start) = random_string(&mut rng, round % 3 == 0);
            assert_eq!(
                string_end(&text, start),
                plain::string_end(&text, start),
                "{:?} from {start}",
                String::from_utf8_lossy(&text)
            );
        }
    }

    /// Each twin directly, not only the one [`string_end`] picks on this CPU.
    #[test]
    fn every_twin_ends_strings_where_the_plain_one_does() {
        let mut rng = fastrand::Rng::with_seed(0xbb67_ae85_84ca_a73bu64);
        let twins = twins();
        for round in 0..20_000 {
            let (text, start) = random_string(&mut rng, round % 3 == 0);
            let plain = plain::string_end(&text, start);
            for (name, twin) in &twins {
                assert_eq!(
                    twin(&text, start),
                    plain,
                    "{name}: {:?} from {start}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    #[test]
    fn strings_end_at_their_closing_quote_wherever_it_falls() {
        for (name, string_end) in twins() {
            for len in 0..70 {
                for at in 0..len {
                    let mut text = vec![b'x'; len];
                    text[at] = b'"';
                    assert_eq!(string_end(&text, 0), Some((at, false)), "{name} {len} {at}");
                    if at >= 2 {
                        // An escaped quote before it, possibly across a block boundary.
                        text[at - 2] = b'\\';
                        text[at - 1] = b'"';
                        assert_eq!(string_end(&text, 0), Some((at, true)), "{name} {len} {at}");
                        text[at - 1] = 0x01;
                        assert_eq!(string_end(&text, 0), None, "{name} {len} {at}");
                    }
                    if at >= 6 {
                        let mut text = vec![b'x'; len];
                        text[at] = b'"';
                        text[at - 6..at].copy_from_slice(b"\\u0022");
                        assert_eq!(string_end(&text, 0), Some((at, true)), "{name}");
                        text[at - 6..at].copy_from_slice(b"\\ud800");
                        assert_eq!(string_end(&text, 0), None, "{name}");
                    }
                }
                assert_eq!(string_end(&vec![0x80; len], 0), None, "{name}");
            }
        }
    }
}
