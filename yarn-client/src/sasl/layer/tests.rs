use super::*;
use crate::sasl::{DigestMd5Client, SaslMechanism, SecurityLayer};

/// One JDK DIGEST-MD5 session: the exchange, then `(from_client, message, wrapped)` steps
/// in the order the JDK wrapped them (both CBC chains run across the steps).
struct Vectors {
    challenge: &'static str,
    jdk_response: &'static str,
    rspauth: &'static str,
    steps: &'static [(bool, &'static str, &'static str)],
}

const IDENTIFIER: [u8; 9] = [1, 2, 3, 4, 5, 6, 7, 8, 9];
const PASSWORD: [u8; 8] = [0xa0, 0xb1, 0xc2, 0x13, 0x24, 0x35, 0x46, 0x57];

/// Made by `scripts/digest-vectors/DigestVectors.java auth-conf` (JDK 17).
const AUTH_CONF: Vectors = Vectors {
    challenge: r#"realm="default",nonce="UcG06lsdvCBNnoHPC4R2LYghSLXvlhMwmUZJqgXo",qop="auth-conf",charset=utf-8,cipher="3des,rc4,des,rc4-56,rc4-40",algorithm=md5-sess"#,
    jdk_response: r#"charset=utf-8,username="AQIDBAUGBwgJ",realm="default",nonce="UcG06lsdvCBNnoHPC4R2LYghSLXvlhMwmUZJqgXo",nc=00000001,cnonce="wfDXJfSaOmI9MQul1yvbhf+MPKT28lr96PFSMi8X",digest-uri="/default",maxbuf=65536,response=2e2ad320e8868cc50c0f231f7cfd9fff,qop=auth-conf,cipher="3des""#,
    rspauth: "rspauth=c708a3423736b51b69be0b8a1c237e58",
    steps: &[
        (true, "0b", "ae89cae483ba442945b2b9d29873a196000100000000"),
        (true, "0c131a21282f", "76f5fc1754bf98c96ecb83967e7bdae953d1b8022910db4e000100000001"),
        (false, "0d141b", "53d32e5cd5cbd41e6242d7204018f233000100000000"),
        (true, "0e151c232a31383f464d545b6269", "fedb6d5ca6a2a0568a45f2e2c39befac2fb12045cb1cbad1a1391ac196d07f7d000100000002"),
        (false, "0f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da", "e8030df90ea85f35a6a417a2f14adc9fdedb27e5fded36c43a5b4b5a0db9b30af32c12256ae04ba22f786a3dfee2a33d000100000001"),
        (true, "10171e252c333a41484f565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7fe050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7dee5ecf3fa01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5", "7c14acaca7d6ed0d3426cae36f36e31c38e33ec8d0f74888a2252aa88bb3c369d39fad700e8bfd63a1c37015b88eb267da6196cbb733785b651107f5e57286d9450c089dc063e00d6bcd450d9de382c3e7ab007c791475386839f0161e65d97e76dfbfefa431cc6f0b1c89c1649f8ea2000100000003"),
        (false, "11181f262d343b424950575e656c737a", "69cbec0b127811e754e8aedc3561db9edf54c86bdb1656b363c7668a45aa21b7000100000002"),
    ],
};

/// Made by `scripts/digest-vectors/DigestVectors.java auth-int` (JDK 17).
const AUTH_INT: Vectors = Vectors {
    challenge: r#"realm="default",nonce="aWmg4/kljsECO5w+7qjNfHd1QyxoStYmii0LTjkg",qop="auth-int",charset=utf-8,algorithm=md5-sess"#,
    jdk_response: r#"charset=utf-8,username="AQIDBAUGBwgJ",realm="default",nonce="aWmg4/kljsECO5w+7qjNfHd1QyxoStYmii0LTjkg",nc=00000001,cnonce="fQm73KwEVu3cGul2GpR6QGI0CkSKB4XRqTGc3Z2q",digest-uri="/default",maxbuf=65536,response=4c2c79c658045879099f499d2503faa6,qop=auth-int"#,
    rspauth: "rspauth=31574f5cce2e12ea28049d820a8ccbad",
    steps: &[
        (true, "0b", "0b87ae113bd413c5c7684c000100000000"),
        (true, "0c131a21282f", "0c131a21282ffff406377d0e24244766000100000001"),
        (false, "0d141b", "0d141b09d21d70230d9903bd7e000100000000"),
        (true, "0e151c232a31383f464d545b6269", "0e151c232a31383f464d545b6269f0863513960e18405df0000100000002"),
        (false, "0f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da", "0f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5ccd3da8e4ecb99bde40b4f4909000100000001"),
        (true, "10171e252c333a41484f565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7fe050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7dee5ecf3fa01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec5", "10171e252c333a41484f565d646b727980878e959ca3aab1b8bfc6cdd4dbe2e9f0f7fe050c131a21282f363d444b525960676e757c838a91989fa6adb4bbc2c9d0d7dee5ecf3fa01080f161d242b323940474e555c636a71787f868d949ba2a9b0b7bec50530f23ba85275aded2d000100000003"),
        (false, "11181f262d343b424950575e656c737a", "11181f262d343b424950575e656c737a6ca7223e824d67a3cf30000100000002"),
    ],
};

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The value of one directive in a DIGEST-MD5 response (quotes removed).
fn directive<'a>(text: &'a str, key: &str) -> &'a str {
    text.split(',')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap()
        .trim_matches('"')
}

/// Replays the JDK client's exchange with our client (same cnonce): our response must be
/// the JDK's, the JDK server's rspauth must satisfy us, and then every token must match
/// byte for byte in both directions.
fn replay(v: &Vectors, qop: Qop) {
    let cnonce = directive(v.jdk_response, "cnonce");
    let mut ours = DigestMd5Client::with_cnonce(&IDENTIFIER, &PASSWORD, cnonce.into());
    let resp =
        String::from_utf8(ours.respond(v.challenge.as_bytes(), "", "default").unwrap()).unwrap();
    for key in ["response", "qop", "username", "cnonce", "digest-uri"] {
        assert_eq!(
            directive(&resp, key),
            directive(v.jdk_response, key),
            "{key} in {resp}"
        );
    }
    if qop == Qop::AuthConf {
        assert_eq!(
            directive(&resp, "cipher"),
            directive(v.jdk_response, "cipher")
        );
    }
    let SecurityLayer {
        qop: got,
        mut sealer,
        mut opener,
        ..
    } = ours
        .verify_success(Some(v.rspauth.as_bytes()))
        .unwrap()
        .unwrap();
    assert_eq!(got, qop);
    // A server-side layer from the same H(A1) plays the JDK server's part.
    let nonce = directive(v.challenge, "nonce");
    let ha1 = ours.ha1("default", nonce);
    let (mut srv_sealer, mut srv_opener) = new_layer(qop, &ha1, Side::Server).unwrap();
    for (i, (from_client, msg, wrapped)) in v.steps.iter().enumerate() {
        let (msg, wrapped) = (unhex(msg), unhex(wrapped));
        if *from_client {
            assert_eq!(sealer.seal(&msg), wrapped, "client token {i}");
            assert_eq!(srv_opener.unseal(&wrapped).unwrap(), msg, "step {i}");
        } else {
            assert_eq!(opener.unseal(&wrapped).unwrap(), msg, "server token {i}");
            assert_eq!(srv_sealer.seal(&msg), wrapped, "step {i}");
        }
    }
}

#[test]
fn jdk_auth_conf_vectors() {
    replay(&AUTH_CONF, Qop::AuthConf);
}

#[test]
fn jdk_auth_int_vectors() {
    replay(&AUTH_INT, Qop::AuthInt);
}

#[test]
fn des_parity_spreading() {
    // All ones: each byte gets 7 ones in its high bits, already odd.
    assert_eq!(des_key_with_parity(&[0xFF; 7]), [0xFE; 8]);
    // All zeros: each byte gets the parity bit alone.
    assert_eq!(des_key_with_parity(&[0; 7]), [0x01; 8]);
    // 0x80 then zeros: the first 7-bit group is 1000000 -> 0x80, plus parity.
    assert_eq!(
        des_key_with_parity(&[0x80, 0, 0, 0, 0, 0, 0]),
        [0x80, 1, 1, 1, 1, 1, 1, 1]
    );
    // Lowest bit set: the last group is 0000001 -> 0x02, plus parity.
    assert_eq!(
        des_key_with_parity(&[0, 0, 0, 0, 0, 0, 1]),
        [1, 1, 1, 1, 1, 1, 1, 0x02]
    );
}

fn pair(qop: Qop) -> (DigestSealer, DigestOpener) {
    let ha1 = [7u8; 16];
    let (client_sealer, _) = new_layer(qop, &ha1, Side::Client).unwrap();
    let (_, server_opener) = new_layer(qop, &ha1, Side::Server).unwrap();
    (client_sealer, server_opener)
}

#[test]
fn auth_has_no_layer() {
    assert!(new_layer(Qop::Auth, &[0; 16], Side::Client).is_none());
}

#[test]
fn tampered_tokens_are_refused() {
    for qop in [Qop::AuthInt, Qop::AuthConf] {
        for at in [0, 5, 17] {
            let (mut s, mut o) = pair(qop);
            let mut t = s.seal(b"eighteen bytes....");
            t[at] ^= 0x40;
            let e = o.unseal(&t).unwrap_err();
            assert!(
                matches!(e, LayerError::BadMac { .. } | LayerError::BadPadding { .. }),
                "{qop} byte {at}: {e}"
            );
        }
    }
}

#[test]
fn replayed_or_skipped_tokens_are_refused() {
    // Integrity: the MAC covers the sequence number it carries, so a replay is a valid
    // MAC with the wrong number.
    let (mut s, mut o) = pair(Qop::AuthInt);
    let first = s.seal(b"one");
    assert_eq!(o.unseal(&first).unwrap(), b"one");
    assert_eq!(
        o.unseal(&first).unwrap_err(),
        LayerError::BadSequence {
            expected: 1,
            got: 0
        }
    );
    let (mut s, mut o) = pair(Qop::AuthInt);
    let _lost = s.seal(b"one");
    assert_eq!(
        o.unseal(&s.seal(b"two")).unwrap_err(),
        LayerError::BadSequence {
            expected: 0,
            got: 1
        }
    );
    // Privacy: a replay or a gap also breaks the CBC chain; either way it is refused.
    let (mut s, mut o) = pair(Qop::AuthConf);
    let first = s.seal(b"one");
    o.unseal(&first).unwrap();
    assert!(o.unseal(&first).is_err());
    let (mut s, mut o) = pair(Qop::AuthConf);
    let _lost = s.seal(b"one");
    assert!(o.unseal(&s.seal(b"two")).is_err());
}

#[test]
fn malformed_tokens_are_typed_errors() {
    let (mut s, mut o) = pair(Qop::AuthInt);
    assert_eq!(
        o.unseal(&[0; 15]).unwrap_err(),
        LayerError::TooShort { len: 15, min: 16 }
    );
    let mut t = s.seal(b"x");
    let n = t.len();
    t[n - 5] = 2; // message type 2: not covered by the MAC
    assert_eq!(o.unseal(&t).unwrap_err(), LayerError::BadMessageType(2));

    let (_, mut o) = pair(Qop::AuthConf);
    assert_eq!(
        o.unseal(&[0; 21]).unwrap_err(),
        LayerError::TooShort { len: 21, min: 22 }
    );
    assert_eq!(
        o.unseal(&[0; 23]).unwrap_err(),
        LayerError::NotBlockAligned { len: 17 }
    );
    // Empty tokens carry nothing and use no sequence number, as in the JDK.
    assert_eq!(o.unseal(&[]).unwrap(), Vec::<u8>::new());
}

#[test]
fn padding_fills_whole_blocks() {
    let (mut s, _) = pair(Qop::AuthConf);
    for len in 1..=40 {
        let t = s.seal(&vec![0xAB; len]);
        let body = t.len() - 6;
        assert_eq!(body % 8, 0, "len {len}");
        let pad = body - len - 10;
        assert!((1..=8).contains(&pad), "len {len}: pad {pad}");
    }
}

proptest::proptest! {
    /// Any sequence of messages crosses both ways intact, under both qops.
    #[test]
    fn round_trips(
        ha1 in proptest::array::uniform16(proptest::num::u8::ANY),
        conf in proptest::bool::ANY,
        msgs in proptest::collection::vec(
            (proptest::bool::ANY, proptest::collection::vec(proptest::num::u8::ANY, 1..300)),
            1..12,
        ),
    ) {
        let qop = if conf { Qop::AuthConf } else { Qop::AuthInt };
        let (mut cs, mut co) = new_layer(qop, &ha1, Side::Client).unwrap();
        let (mut ss, mut so) = new_layer(qop, &ha1, Side::Server).unwrap();
        for (from_client, m) in msgs {
            let back = if from_client {
                so.unseal(&cs.seal(&m))
            } else {
                co.unseal(&ss.seal(&m))
            };
            proptest::prop_assert_eq!(back.unwrap(), m);
        }
    }

    /// Garbage never panics the opener.
    #[test]
    fn unseal_never_panics(
        conf in proptest::bool::ANY,
        token in proptest::collection::vec(proptest::num::u8::ANY, 0..200),
    ) {
        let qop = if conf { Qop::AuthConf } else { Qop::AuthInt };
        let (_, mut o) = new_layer(qop, &[3; 16], Side::Client).unwrap();
        let _ = o.unseal(&token);
    }
}
