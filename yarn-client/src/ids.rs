//! String forms of YARN ids (`application_..`, `appattempt_..`, `container_..`), for logs
//! and for reading `CONTAINER_ID` from the container environment.

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

/// `host:port`, the key YARN uses for NM tokens.
pub fn node_id_string(n: &NodeIdProto) -> String {
    format!("{}:{}", n.host(), n.port())
}

/// Parses `container_[e<epoch>_]<ts>_<app>_<attempt>_<seq>`.
pub fn parse_container_id(s: &str) -> Option<ContainerIdProto> {
    let rest = s.strip_prefix("container_")?;
    let parts: Vec<&str> = rest.split('_').collect();
    let (epoch, nums) = match parts.as_slice() {
        [e, ts, app, att, seq] if e.starts_with('e') => {
            (e[1..].parse::<i64>().ok()?, [*ts, *app, *att, *seq])
        }
        [ts, app, att, seq] => (0, [*ts, *app, *att, *seq]),
        _ => return None,
    };
    let ts: i64 = nums[0].parse().ok()?;
    let app: i32 = nums[1].parse().ok()?;
    let att: i32 = nums[2].parse().ok()?;
    let seq: i64 = nums[3].parse().ok()?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
