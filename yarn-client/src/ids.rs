//! String forms of YARN ids (`application_..`, `appattempt_..`, `container_..`), for logs
//! and for reading `CONTAINER_ID` from the container environment. This is the one
//! container-id parser of both crates (the AM reads its own application and attempt with
//! [`parse_container_id`] and [`app_attempt_of`]).

use crate::proto::yarn::{
    ApplicationAttemptIdProto, ApplicationIdProto, ContainerIdProto, NodeIdProto,
};

pub fn app_id_string(a: &ApplicationIdProto) -> String {
    format!(
        "application_{}_{:04}",
        a.cluster_timestamp.unwrap_or(0),
        a.id.unwrap_or(0)
    )
}

pub fn container_id_string(c: &ContainerIdProto) -> String {
    let att = c.app_attempt_id.unwrap_or_default();
    let app = att.application_id.unwrap_or_default();
    let id = c.id.unwrap_or(0);
    let epoch = id >> 40;
    let seq = id & 0xFF_FFFF_FFFF;
    let epoch = if epoch > 0 {
        format!("e{epoch:02}_")
    } else {
        String::new()
    };
    format!(
        "container_{epoch}{}_{:04}_{:02}_{seq:06}",
        app.cluster_timestamp.unwrap_or(0),
        app.id.unwrap_or(0),
        att.attempt_id.unwrap_or(0)
    )
}

/// Parses `application_<cluster timestamp>_<number>` (digits only), the inverse of
/// [`app_id_string`].
pub fn parse_app_id(s: &str) -> Option<ApplicationIdProto> {
    let (ts, id) = s.strip_prefix("application_")?.split_once('_')?;
    let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(ts) || !digits(id) {
        return None;
    }
    Some(ApplicationIdProto {
        id: Some(id.parse().ok()?),
        cluster_timestamp: Some(ts.parse().ok()?),
    })
}

/// `host:port`, the key YARN uses for NM tokens.
pub fn node_id_string(n: &NodeIdProto) -> String {
    format!("{}:{}", n.host(), n.port())
}

/// Parses `container_[e<epoch>_]<ts>_<app>_<attempt>_<seq>` (the epoch appears after an
/// RM restart with work-preserving recovery). Every number is plain decimal digits.
pub fn parse_container_id(s: &str) -> Option<ContainerIdProto> {
    fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    }
    let rest = s.strip_prefix("container_")?;
    let parts: Vec<&str> = rest.split('_').collect();
    let (epoch, nums) = match parts.as_slice() {
        [e, ts, app, att, seq] if e.starts_with('e') => {
            (num::<i64>(&e[1..])?, [*ts, *app, *att, *seq])
        }
        [ts, app, att, seq] => (0, [*ts, *app, *att, *seq]),
        _ => return None,
    };
    let ts: i64 = num(nums[0])?;
    let app: i32 = num(nums[1])?;
    let att: i32 = num(nums[2])?;
    let seq: i64 = num(nums[3])?;
    let app_id = ApplicationIdProto {
        id: Some(app),
        cluster_timestamp: Some(ts),
    };
    Some(ContainerIdProto {
        app_id: Some(app_id),
        app_attempt_id: Some(ApplicationAttemptIdProto {
            application_id: Some(app_id),
            attempt_id: Some(att),
        }),
        id: Some((epoch << 40) | seq),
    })
}

/// The application (`application_<ts>_<app>`) and the attempt number a container belongs
/// to: what an AM learns about itself from its `CONTAINER_ID`.
pub fn app_attempt_of(c: &ContainerIdProto) -> (String, u32) {
    let att = c.app_attempt_id.unwrap_or_default();
    let app = app_id_string(&att.application_id.unwrap_or_default());
    // The parser reads digits only, so the attempt is never negative.
    (app, att.attempt_id.unwrap_or(0).max(0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_ids_round_trip_and_junk_is_refused() {
        let a = parse_app_id("application_1700000000000_0042").unwrap();
        assert_eq!(
            (a.cluster_timestamp, a.id),
            (Some(1_700_000_000_000), Some(42))
        );
        assert_eq!(app_id_string(&a), "application_1700000000000_0042");
        for bad in [
            "application_1_",
            "application__1",
            "app_1_2",
            "application_1_2_3",
            "application_+1_2",
        ] {
            assert!(parse_app_id(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn container_ids_round_trip() {
        for s in [
            "container_1700000000000_0001_01_000001",
            "container_e17_1700000000000_0001_01_000002",
        ] {
            let c = parse_container_id(s).unwrap();
            assert_eq!(container_id_string(&c), s);
        }
        assert!(parse_container_id("container_x").is_none());
    }

    #[test]
    fn container_ids_with_epoch_and_garbage() {
        let app_attempt = |s: &str| parse_container_id(s).map(|c| app_attempt_of(&c));
        assert_eq!(
            app_attempt("container_e17_1410901177871_0001_01_000005"),
            Some(("application_1410901177871_0001".into(), 1))
        );
        assert_eq!(
            app_attempt("container_1_12345_01_000001").unwrap().0,
            "application_1_12345"
        );
        assert_eq!(app_attempt("container_x_1_1_1"), None);
        assert_eq!(app_attempt("application_1_1"), None);
        assert_eq!(app_attempt("container_1_1_-1_1"), None);
    }
}
