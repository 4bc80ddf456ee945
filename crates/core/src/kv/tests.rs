use super::*;
use crate::am::events::ReplyTo;
use crate::driver::journal::{decode, encode, Entry};

fn small() -> KvStore {
    KvStore::new(KvLimits {
        max_key_bytes: 8,
        max_value_bytes: 16,
        max_keys: 3,
        max_total_bytes: 40,
    })
}

#[test]
fn versions_grow_with_every_write_and_never_repeat_for_a_key() {
    let mut s = KvStore::default();
    assert_eq!(s.put("a", "1").unwrap().0, 1);
    assert_eq!(s.put("b", "2").unwrap().0, 2);
    assert_eq!(s.put("a", "3").unwrap().0, 3);
    assert_eq!(s.get("a").unwrap().version, 3);
    assert_eq!(s.get("a").unwrap().value, "3");
    assert_eq!(s.delete("a").unwrap().unwrap().0, 4);
    assert!(s.get("a").is_none());
    // A delete of an absent key changes nothing.
    assert!(s.delete("a").unwrap().is_none());
    assert_eq!(s.revision(), 4);
    assert_eq!(s.put("a", "5").unwrap().0, 5);
}

#[test]
fn every_limit_refuses_the_write_and_stores_nothing() {
    let mut s = small();
    assert_eq!(s.put("", "v"), Err(KvError::EmptyKey));
    assert_eq!(
        s.put("123456789", "v"),
        Err(KvError::KeyTooLong { len: 9, max: 8 })
    );
    assert_eq!(
        s.put("a\nb", "v"),
        Err(KvError::ControlInKey { byte: b'\n' })
    );
    assert_eq!(s.put("..", "v"), Err(KvError::DotKey));
    let big = "x".repeat(17);
    let e = s.put("k", &big).unwrap_err();
    assert_eq!(e, KvError::ValueTooLarge { len: 17, max: 16 });
    assert!(e.is_too_large());
    assert!(!KvError::EmptyKey.is_too_large());
    assert!(s.is_empty());
    assert_eq!((s.revision(), s.total_bytes()), (0, 0));

    s.put("a", &"1".repeat(16)).unwrap(); // 17 bytes
    s.put("b", &"2".repeat(16)).unwrap(); // 34 bytes
    let e = s.put("c", "1234567").unwrap_err(); // 34 + 8 > 40
    assert_eq!(e, KvError::StoreFull { would: 42, max: 40 });
    assert!(e.is_too_large());
    s.put("c", "1").unwrap(); // 36
    assert_eq!(s.put("d", ""), Err(KvError::TooManyKeys { max: 3 }));
    // Overwriting counts the old value as freed, and a key already there is no new key.
    s.put("a", "").unwrap();
    assert_eq!(s.total_bytes(), 1 + 17 + 2);
    assert_eq!((s.len(), s.revision()), (3, 4));
    assert!(s.get("d").is_none());
}

#[test]
fn a_prefix_lists_exactly_its_keys_in_order() {
    let mut s = KvStore::default();
    for k in ["app/b", "app/a", "ap", "app0", "apq", "b", "app/"] {
        s.put(k, k).unwrap();
    }
    let keys = |p: &str| -> Vec<String> { s.list(p).entries.into_iter().map(|e| e.key).collect() };
    assert_eq!(keys("app/"), ["app/", "app/a", "app/b"]);
    assert_eq!(keys("app"), ["app/", "app/a", "app/b", "app0"]);
    assert_eq!(keys("zz"), Vec::<String>::new());
    assert_eq!(keys("").len(), 7);
    assert_eq!(s.list("").revision, 7);
}

#[test]
fn a_watch_answers_only_a_version_above_the_one_seen() {
    let mut s = KvStore::default();
    assert!(s.watch("k", 0).is_none(), "absent: keep waiting");
    s.put("k", "v1").unwrap();
    let seen = s.watch("k", 0).unwrap();
    assert_eq!((seen.value.as_str(), seen.version), ("v1", 1));
    assert!(
        s.watch("k", seen.version).is_none(),
        "unchanged: keep waiting"
    );
    s.put("other", "x").unwrap();
    assert!(s.watch("k", seen.version).is_none(), "another key's write");
    s.delete("k").unwrap();
    assert!(
        s.watch("k", seen.version).is_none(),
        "a delete is not a value"
    );
    s.put("k", "v2").unwrap();
    assert_eq!(s.watch("k", seen.version).unwrap().value, "v2");
}

#[test]
fn replaying_the_journal_rebuilds_the_store_and_its_revision() {
    let mut s = KvStore::default();
    let mut journal = vec![Entry::AmAttempt { attempt: 1 }];
    journal.push(s.put("a", "1").unwrap().1);
    journal.push(s.put("b", "ü \"quoted\"\nline").unwrap().1);
    journal.push(s.delete("a").unwrap().unwrap().1);
    journal.push(s.put("c", "3").unwrap().1);
    // Through the journal's own line format, one line written twice.
    let mut text: String = journal.iter().map(encode).collect();
    text.push_str(&encode(&journal[2]));
    let read = decode(&text).unwrap();
    let mut again = KvStore::default();
    assert_eq!(again.replay(&read), 4);
    assert_eq!(again.list(""), s.list(""));
    assert_eq!(again.revision(), 4);
    assert_eq!(again.total_bytes(), s.total_bytes());
    assert_eq!(again.put("d", "4").unwrap().0, 5, "versions continue");
}

#[test]
fn the_desk_answers_reads_at_once_and_writes_only_after_the_journal() {
    let mut desk = KvDesk::new(small());
    let mut next = 0;
    let mut ask = |desk: &mut KvDesk, r: KvRequest| {
        next += 1;
        (ReplyTo(next), desk.handle(r, ReplyTo(next)))
    };
    let put = |k: &str, v: &str| KvRequest::Put {
        key: k.into(),
        value: v.into(),
    };
    let (to, stored) = ask(&mut desk, put("k", "v"));
    assert_eq!(stored, None, "no answer before the journal");
    let journal = desk.take_journal();
    assert!(matches!(&journal[..], [Entry::KvPut { key, version: 1, .. }] if key == "k"));
    let acks = desk.take_acks(true);
    assert!(matches!(&acks[..], [(t, KvAnswer::Stored(s))] if *t == to && s.version == 1));

    // Refused and no-op writes are answered at once, with nothing to journal.
    let (_, big) = ask(&mut desk, put("k", &"x".repeat(17)));
    assert!(matches!(big, Some(KvAnswer::Refused(e)) if e.is_too_large()));
    let (_, gone) = ask(&mut desk, KvRequest::Delete { key: "zz".into() });
    assert!(matches!(gone, Some(KvAnswer::Deleted(d)) if !d.deleted));
    assert!(desk.take_journal().is_empty());
    let (_, get) = ask(&mut desk, KvRequest::Get { key: "k".into() });
    assert!(matches!(get, Some(KvAnswer::Entry(Some(e))) if e.value == "v"));
    let (_, w) = ask(
        &mut desk,
        KvRequest::Watch {
            key: "k".into(),
            after: 1,
        },
    );
    assert_eq!(w, Some(KvAnswer::Entry(None)));
    assert!(desk.take_acks(true).is_empty(), "nothing held for them");

    // A journal that failed: the write's answer says so.
    let (to, lost) = ask(&mut desk, put("j", "1"));
    assert_eq!(lost, None);
    assert_eq!(desk.take_journal().len(), 1);
    assert_eq!(desk.take_acks(false), [(to, KvAnswer::NotJournaled)]);
}
