//! Starts executors on NodeManagers, a bounded number at a time.
//!
//! Launching is the slow part of a grant (one NM round trip, with a SASL handshake on a new
//! connection), so it runs off the heartbeat loop: each launch is a task, at most
//! `max_parallel` at once, reporting back on a channel. The loop turns the reports into
//! allocator events, so a dead NodeManager delays only its own executors.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, Semaphore};
use tracing::{info, warn};
use yarn_client::amrm::AllocatedContainer;
use yarn_client::nm::{LaunchSpec, NmClient};
use yarn_client::rpc::RpcConfig;
use yarn_client::token::Token;

use yarn_am_core::am::events::LaunchReport;
use yarn_am_core::ids::ExecutorId;
use yarn_am_wire::executor_env::{self, ExecutorEnv};
use yarn_am_wire::{credentials, poll};
use yarn_client::credentials::Format;
use yarn_client::launch_script::literal_env_value;

use yarn_am_core::am::pool::DeclaredKind;
use yarn_am_wire::spec::ExecutorSpec;

use super::token_refresh::SharedTokens;

/// What every executor is told about the AM, besides its own id.
#[derive(Clone)]
pub struct DriverContact {
    pub app_id: String,
    pub url: String,
    /// The fingerprint of the certificate the AM serves; each executor pins it.
    pub tls_pin: yarn_am_wire::tls::Fingerprint,
    /// The staging folder, where a later AM attempt publishes its URL (see
    /// [`ExecutorEnv::staging`]); `None` on the last attempt.
    pub staging_dir: Option<crate::staging::StagingDir>,
    /// The application's master secret: each executor's key is derived from it, and it
    /// never leaves the AM.
    pub master_secret: Arc<[u8]>,
    /// The AM's credentials (refreshed while it runs): every executor gets their tokens
    /// minus the AMRM and RM tokens, besides its own key (see [`SharedTokens::executor_tokens`]).
    pub tokens: SharedTokens,
    /// `submit --service-data`: the NodeManagers' auxiliary services' data, by service
    /// name, in every executor's launch context (never in its credentials; may be secret).
    pub service_data: BTreeMap<String, Vec<u8>>,
}

impl std::fmt::Debug for DriverContact {
    /// Never prints the master secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverContact")
            .field("app_id", &self.app_id)
            .field("url", &self.url)
            .field("tls_pin", &self.tls_pin)
            .field("tokens", &self.tokens)
            .field(
                "service_data",
                &self.service_data.keys().collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

pub struct Launcher {
    spec: ExecutorSpec,
    contact: DriverContact,
    permits: Arc<Semaphore>,
    reports: mpsc::UnboundedSender<LaunchReport>,
    rpc: RpcConfig,
}

impl Launcher {
    /// Whether NM connections accept a switch to SIMPLE after our NM token (see
    /// `RpcConfig::fallback_to_simple_auth_allowed`).
    pub fn allow_simple_fallback(&mut self, allowed: bool) {
        self.rpc.fallback_to_simple_auth_allowed = allowed;
    }

    /// The least qop NM connections accept (see `RpcConfig::min_qop`).
    pub fn require_qop(&mut self, min_qop: yarn_client::rpc::Qop) {
        self.rpc.min_qop = min_qop;
    }

    pub fn new(
        spec: ExecutorSpec,
        contact: DriverContact,
        max_parallel: usize,
    ) -> (Self, mpsc::UnboundedReceiver<LaunchReport>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let rpc = RpcConfig {
            connect_timeout: Duration::from_secs(20),
            call_timeout: Duration::from_secs(60),
            ..RpcConfig::default()
        };
        (
            Self {
                spec,
                contact,
                permits: Arc::new(Semaphore::new(max_parallel.max(1))),
                reports: tx,
                rpc,
            },
            rx,
        )
    }

    /// The launch context of one executor: its command with logs in the container log dir,
    /// the environment that lets it find the AM (nothing secret: the NodeManager writes the
    /// environment into `launch_container.sh` in the log dir), and its credentials with its
    /// own key to authenticate to the AM (see [`yarn_am_wire::poll`]).
    /// `kind` indexes [`ExecutorSpec::all_kinds`], or is `declared` while the app runs (as
    /// the pool's [`yarn_am_core::am::pool::Launch`] carries it): its vcores and command, and
    /// its name in [`executor_env::KIND`] when the app has, or has room for, several.
    pub fn launch_spec(
        &self,
        executor_id: ExecutorId,
        kind: usize,
        declared: Option<&DeclaredKind>,
        container: &AllocatedContainer,
    ) -> LaunchSpec {
        let container_id = container.id.as_str();
        let (vcores, command) = match declared {
            Some(d) => (d.shape.vcores, self.spec.command.as_str()),
            None => match kind.checked_sub(1).and_then(|i| self.spec.kinds.get(i)) {
                Some(k) => (k.vcores, k.command.as_deref().unwrap_or(&self.spec.command)),
                None => (self.spec.vcores, self.spec.command.as_str()),
            },
        };
        let mut environment = self.spec.env.clone();
        let mut kind_name = None;
        if let Some(d) = declared {
            // The kind's own values (a Spark resource profile's id, heap): literal like
            // every other value below, so the command reads them as `$NAME`.
            environment.extend(d.env.iter().map(|(k, v)| (k.clone(), v.clone())));
            kind_name = Some(d.shape.name.clone());
        } else if self.spec.stripe_width() > 1 {
            kind_name = Some(self.spec.kind_name(kind).to_string());
        }
        let ours = ExecutorEnv {
            id: executor_id.to_string(),
            container: container_id.to_string(),
            app: self.contact.app_id.clone(),
            driver_url: self.contact.url.clone(),
            cores: u32::try_from(vcores).unwrap_or_default(),
            kind: kind_name,
            // What YARN granted, not what was asked: the RM may round a resource up.
            resources: container.resources.clone(),
            staging: self.contact.staging_dir.clone(),
        };
        environment.extend(ours.to_env().into_iter().map(|(k, v)| (k.to_string(), v)));
        // Every value reaches the executor exactly as given (the user's `--executor-env`
        // included), whatever the launch script would expand...
        let mut environment: BTreeMap<String, String> = environment
            .into_iter()
            .map(|(k, v)| (k, literal_env_value(&v)))
            .collect();
        // ...but this one, which asks the NodeManager for the container's log directory (a
        // command shipped as a script never sees `<LOG_DIR>` expanded).
        environment.insert(
            executor_env::LOG_DIR.to_string(),
            executor_env::LOG_DIR_MARKER.to_string(),
        );
        let local_resources: BTreeMap<_, _> = self
            .spec
            .files
            .iter()
            .map(|(name, f)| (name.clone(), f.local_resource()))
            .collect();
        LaunchSpec {
            command: vec![format!("{command} 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr")],
            environment,
            local_resources,
            tokens: Some(self.executor_credentials(executor_id, container_id)),
            acls: self.spec.acls.clone(),
            service_data: self.contact.service_data.clone(),
        }
    }

    /// One executor's token blob: the shared tokens plus its own key and its container's KV
    /// key, nothing else secret,
    /// and the fingerprint of the AM's certificate (in the credentials beside the key rather
    /// than in the environment, so that whoever can change the environment the executor sees
    /// cannot also choose whom it trusts).
    fn executor_credentials(&self, executor_id: ExecutorId, container_id: &str) -> Vec<u8> {
        let key = poll::executor_key(
            &self.contact.master_secret,
            &executor_id.to_string(),
            container_id,
        );
        let mut creds = self.contact.tokens.executor_tokens();
        creds
            .secrets
            .push((credentials::EXECUTOR_KEY_ALIAS.to_string(), key.to_vec()));
        creds.secrets.push((
            yarn_am_wire::tls::PIN_ALIAS.to_string(),
            self.contact.tls_pin.0.to_vec(),
        ));
        // The container's key to the key-value store, and the pin again, under aliases the
        // executor keeps for its tasks (see `yarn_am_wire::kv`).
        let kv_key = yarn_am_wire::kv::kv_key(&self.contact.master_secret, container_id);
        creds.secrets.extend([
            (yarn_am_wire::kv::KV_KEY_ALIAS.to_string(), kv_key.to_vec()),
            (
                yarn_am_wire::kv::KV_PIN_ALIAS.to_string(),
                self.contact.tls_pin.0.to_vec(),
            ),
        ]);
        creds.encode(Format::Writable)
    }

    /// Starts the executor in the background; the outcome arrives as a [`LaunchReport`].
    pub fn launch(
        &self,
        executor_id: ExecutorId,
        kind: usize,
        declared: Option<&DeclaredKind>,
        container: AllocatedContainer,
        nm_token: Option<Token>,
    ) {
        let container_id = container.id.clone();
        let spec = self.launch_spec(executor_id, kind, declared, &container);
        let permits = self.permits.clone();
        let reports = self.reports.clone();
        let rpc = self.rpc.clone();
        tokio::spawn(async move {
            let _permit = permits.acquire_owned().await;
            let report = match start(&container, nm_token, spec, rpc).await {
                Ok(()) => {
                    info!(executor = %executor_id, container = %container_id, "executor started");
                    LaunchReport::Started {
                        container: container_id,
                    }
                }
                Err(error) => {
                    warn!(executor = %executor_id, container = %container_id, %error, "executor launch failed");
                    LaunchReport::Failed {
                        container: container_id,
                        error,
                    }
                }
            };
            let _ = reports.send(report);
        });
    }
}

async fn start(
    container: &AllocatedContainer,
    nm_token: Option<Token>,
    spec: LaunchSpec,
    rpc: RpcConfig,
) -> Result<(), String> {
    let node = &container.node;
    let token = nm_token.ok_or_else(|| format!("the RM sent no NM token for {node}"))?;
    let nm = NmClient::new(node, token, rpc);
    nm.start_allocated(container, spec)
        .await
        .map_err(|e| format!("startContainers on {node}: {e}"))?
        .map_err(|msg| format!("{node} refused the container: {}", explain_refusal(&msg)))
}

/// The NodeManager's refusal, with a hint where its message is terse: a launch context whose
/// service data names an auxiliary service the NM does not run fails with Hadoop's
/// `InvalidAuxServiceException` ("The auxService:NAME does not exist").
fn explain_refusal(msg: &str) -> String {
    if msg.contains("auxService:") && msg.contains("does not exist") {
        format!(
            "{msg} (submit --service-data names an auxiliary service this NodeManager does not \
             run: see its yarn.nodemanager.aux-services)"
        )
    } else {
        msg.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use yarn_client::credentials::Credentials;

    /// A launcher for one executor of 256 MB running `command`, with `env` for the executors.
    fn launcher(
        command: &str,
        env: &[(&str, &str)],
        master: &[u8],
        tokens: Credentials,
    ) -> Launcher {
        let contact = DriverContact {
            app_id: "application_1_0001".into(),
            url: "https://nm1:4000".into(),
            tls_pin: yarn_am_wire::tls::Fingerprint([9; 32]),
            staging_dir: None,
            master_secret: master.to_vec().into(),
            tokens: SharedTokens::new(tokens),
            service_data: Default::default(),
        };
        let spec = ExecutorSpec {
            command: command.into(),
            memory_mb: 256,
            vcores: 1,
            initial: 1,
            min: 0,
            max: 1,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            files: Default::default(),
            acls: Default::default(),
            node_label: None,
            resources: Default::default(),
            kinds: Vec::new(),
            max_kinds: 0,
        };
        Launcher::new(spec, contact, 1).0
    }

    #[test]
    fn each_executor_gets_its_own_key_in_its_credentials_and_no_secret_in_its_environment() {
        let master: Arc<[u8]> = b"master-secret-hex".to_vec().into();
        let hdfs = yarn_client::token::Token {
            identifier: vec![1],
            password: vec![2],
            kind: "HDFS_DELEGATION_TOKEN".into(),
            service: "nn:8020".into(),
        };
        let yarn_token = |kind: &str| yarn_client::token::Token {
            kind: kind.into(),
            service: String::new(),
            ..hdfs.clone()
        };
        // Audit L2: the AM holds the AMRM and RM tokens; no executor may get them.
        let tokens = Credentials {
            tokens: vec![
                (
                    "amrm".into(),
                    yarn_token(yarn_client::credentials::AMRM_TOKEN_KIND),
                ),
                (
                    credentials::RM_TOKEN_ALIAS.into(),
                    yarn_token(credentials::RM_TOKEN_KIND),
                ),
                ("hdfs".into(), hdfs),
            ],
            secrets: vec![],
        };
        let launcher = launcher("./yarn-am executor", &[], &master, tokens);
        let container = "container_1_0001_01_000002";
        let l = launcher.launch_spec(
            ExecutorId::new(1),
            0,
            None,
            &yarn_am_core::am::fixtures::container(container, "h1"),
        );
        let creds = Credentials::decode(l.tokens.as_deref().unwrap()).unwrap();
        let key = poll::executor_key(&master, "1", container);
        assert_eq!(
            creds.secret(credentials::EXECUTOR_KEY_ALIAS),
            Some(&key[..])
        );
        assert_eq!(
            creds.secret(yarn_am_wire::tls::PIN_ALIAS),
            Some(&[9u8; 32][..])
        );
        assert_eq!(
            creds.secret(yarn_am_wire::kv::KV_KEY_ALIAS),
            Some(&yarn_am_wire::kv::kv_key(&master, container)[..])
        );
        assert_eq!(
            creds.secret(yarn_am_wire::kv::KV_PIN_ALIAS),
            Some(&[9u8; 32][..])
        );
        assert_eq!(creds.secrets.len(), 4);
        let kinds: Vec<&str> = creds.tokens.iter().map(|(_, t)| t.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["HDFS_DELEGATION_TOKEN"],
            "only the HDFS token goes along"
        );
        let other = Credentials::decode(
            &launcher
                .launch_spec(
                    ExecutorId::new(2),
                    0,
                    None,
                    &yarn_am_core::am::fixtures::container("container_1_0001_01_000003", "h1"),
                )
                .tokens
                .unwrap(),
        )
        .unwrap();
        assert_ne!(
            other.secret(credentials::EXECUTOR_KEY_ALIAS),
            Some(&key[..])
        );
        let shown = format!("{:?} {:?}", l.environment, l.command);
        for needle in [hex::encode(key), "master-secret-hex".to_string()] {
            assert!(!shown.contains(&needle), "{shown}");
        }
        assert!(!format!("{:?}", launcher.contact).contains("master-secret"));
    }

    #[test]
    fn service_data_goes_into_every_launch_context_and_never_into_credentials() {
        let alias = credentials::service_data_alias("spark_shuffle");
        let am_creds = Credentials {
            tokens: vec![],
            secrets: vec![(alias.clone(), b"shuffle-s3cret".to_vec())],
        };
        let mut launcher = launcher("true", &[], b"m", am_creds.clone());
        // As `am::start` fills it: from the AM's credentials.
        launcher.contact.service_data = credentials::service_data(&am_creds);
        for n in [2, 3] {
            let l = launcher.launch_spec(
                ExecutorId::new(n),
                0,
                None,
                &yarn_am_core::am::fixtures::container(
                    &format!("container_1_0001_01_00000{n}"),
                    "h1",
                ),
            );
            assert_eq!(
                l.service_data,
                BTreeMap::from([("spark_shuffle".to_string(), b"shuffle-s3cret".to_vec())])
            );
            let creds = Credentials::decode(l.tokens.as_deref().unwrap()).unwrap();
            assert_eq!(creds.secret(&alias), None);
            assert!(!format!("{:?}", l.environment).contains("s3cret"));
        }
        let shown = format!("{:?}", launcher.contact);
        assert!(
            shown.contains("spark_shuffle") && !shown.contains("s3cret"),
            "{shown}"
        );
    }

    #[test]
    fn a_refusal_for_an_unknown_auxiliary_service_says_what_to_check() {
        let m = explain_refusal("The auxService:no_such does not exist");
        assert!(
            m.starts_with("The auxService:no_such does not exist ("),
            "{m}"
        );
        assert!(m.contains("yarn.nodemanager.aux-services"), "{m}");
        assert_eq!(explain_refusal("other"), "other");
    }

    /// The NodeManager's `launch_container.sh` for `l`, as Hadoop 3.x writes it (see
    /// `yarn_client::launch_script`): every value and the command through
    /// `expandEnvironment`, then `export K="V"` lines and `exec /bin/bash -c "COMMAND"`.
    fn nm_launch_script(l: &LaunchSpec, log_dir: &str) -> String {
        let expand = |v: &str| {
            v.replace("<LOG_DIR>", log_dir)
                .replace("<CPS>", ":")
                .replace("{{", "$")
                .replace("}}", "")
        };
        let mut script = String::from("#!/bin/bash\n\n");
        for (k, v) in &l.environment {
            script.push_str(&format!("export {k}=\"{}\"\n", expand(v)));
        }
        script.push_str(&format!(
            "exec /bin/bash -c \"{}\"\n",
            expand(&l.command.join(" "))
        ));
        script
    }

    /// An executor's launch context, run the way the NodeManager runs it, in a scratch
    /// folder holding the command's script: bash runs the user's command as typed and the
    /// environment value arrives as given.
    #[test]
    fn the_launch_script_runs_the_command_and_exports_the_value_as_typed() {
        let command = "printf '<%s>\\n' \"$(echo sub)\" `echo back` 'single \"q\" $HOME' \
                       \"double 'q' \\$HOME\" 'héllo ✓' '{{HOME}} <LOG_DIR> <CPS>'\n\
                       echo \"line 2\"\nprintf '%s' \"$V\" > \"$YARN_AM_LOG_DIR/v.out\"";
        let value = "$(echo no) `echo no` $HOME 'a' \"b\" c\\d {{HOME}} <LOG_DIR> <CPS>\nhé ✓ \\";
        let dir = std::env::temp_dir().join(format!("yarn-am-launch-{}", std::process::id()));
        let logs = dir.join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(dir.join("yarn-am-command.sh"), command).unwrap();
        let launcher = launcher(
            "/bin/bash yarn-am-command.sh",
            &[("V", value)],
            b"m",
            Credentials::default(),
        );
        let l = launcher.launch_spec(
            ExecutorId::new(1),
            0,
            None,
            &yarn_am_core::am::fixtures::container("container_1_0001_01_000002", "h1"),
        );
        let script = nm_launch_script(&l, logs.to_str().unwrap());
        let status = std::process::Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&dir)
            .env("HOME", "/home/nobody")
            .status()
            .unwrap();
        let read = |f: &str| std::fs::read_to_string(logs.join(f)).unwrap();
        assert!(status.success(), "{script}\n{}", read("stderr"));
        assert_eq!(
            read("stdout"),
            "<sub>\n<back>\n<single \"q\" $HOME>\n<double 'q' $HOME>\n<héllo ✓>\n\
             <{{HOME}} <LOG_DIR> <CPS>>\nline 2\n"
        );
        assert_eq!(read("v.out"), value);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The user's values are escaped for the launch script; the log directory is the one
    /// value the NodeManager must expand.
    #[test]
    fn environment_values_are_literal_except_the_log_dir() {
        let launcher = launcher(
            "/bin/bash yarn-am-command.sh",
            &[("V", "$(x) {{y}}")],
            b"m",
            Credentials::default(),
        );
        let l = launcher.launch_spec(
            ExecutorId::new(1),
            0,
            None,
            &yarn_am_core::am::fixtures::container("container_1_0001_01_000002", "h1"),
        );
        assert_eq!(l.environment["V"], r#"\$(x) {""{y}""}"#);
        assert_eq!(l.environment[executor_env::LOG_DIR], "<LOG_DIR>");
        assert_eq!(l.environment[executor_env::DRIVER_URL], "https://nm1:4000");
        assert_eq!(
            l.command,
            ["/bin/bash yarn-am-command.sh 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"]
        );
    }

    /// An executor learns the resources its container holds as YARN granted them.
    #[test]
    fn granted_resources_reach_the_executor() {
        let launcher = launcher("./x", &[], b"m", Credentials::default());
        let mut c = yarn_am_core::am::fixtures::container("container_1_0001_01_000002", "h1");
        let none = launcher.launch_spec(ExecutorId::new(1), 0, None, &c);
        assert!(!none.environment.contains_key(executor_env::RESOURCES));
        c.resources = vec![
            ("example.com/accelerator".into(), 2),
            ("yarn.io/gpu".into(), 1),
        ];
        let l = launcher.launch_spec(ExecutorId::new(1), 0, None, &c);
        assert_eq!(
            l.environment[executor_env::RESOURCES],
            "example.com/accelerator=2,yarn.io/gpu=1"
        );
    }

    /// A kind's executor runs the kind's command with its cores, and is told its kind; the
    /// default kind's keeps its own command.
    #[test]
    fn each_kind_launches_its_own_command_and_knows_its_kind() {
        let mut launcher = launcher("./default", &[], b"m", Credentials::default());
        launcher.spec.kinds = vec![yarn_am_wire::spec::ExecutorKind {
            name: "accel".into(),
            memory_mb: 512,
            vcores: 3,
            initial: 1,
            min: 0,
            max: 1,
            node_label: None,
            resources: Default::default(),
            command: Some("./accel".into()),
        }];
        let c = yarn_am_core::am::fixtures::container("container_1_0001_01_000002", "h1");
        let accel = launcher.launch_spec(ExecutorId::new(2), 1, None, &c);
        assert_eq!(
            accel.command,
            ["./accel 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"]
        );
        assert_eq!(accel.environment[executor_env::KIND], "accel");
        assert_eq!(accel.environment[executor_env::CORES], "3");
        let plain = launcher.launch_spec(ExecutorId::new(1), 0, None, &c);
        assert_eq!(
            plain.command,
            ["./default 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"]
        );
        assert_eq!(plain.environment[executor_env::KIND], "default");
        launcher.spec.kinds.clear();
        let alone = launcher.launch_spec(ExecutorId::new(1), 0, None, &c);
        assert!(!alone.environment.contains_key(executor_env::KIND));
    }

    /// A kind declared while the app runs: the app's command with the kind's cores, and its
    /// `env` values in the environment literally (the launch script expands none of them).
    #[test]
    fn a_declared_kind_launches_the_apps_command_with_its_env_as_typed() {
        let mut launcher = launcher("./default", &[], b"m", Credentials::default());
        // Room for kinds declared while the app runs.
        launcher.spec.max_kinds = 4;
        let decl = DeclaredKind {
            shape: yarn_am_wire::spec::ExecutorKind {
                name: "rp1".into(),
                memory_mb: 2048,
                vcores: 4,
                initial: 0,
                min: 0,
                max: 2,
                node_label: None,
                resources: Default::default(),
                command: None,
            },
            env: BTreeMap::from([
                ("SPARK_YARNAM_PROFILE_ID".into(), "1".into()),
                ("ODD".into(), "$HOME `x` \"q\"".into()),
            ]),
        };
        let c = yarn_am_core::am::fixtures::container("container_1_0001_01_000003", "h1");
        let l = launcher.launch_spec(ExecutorId::new(3), 2, Some(&decl), &c);
        assert_eq!(
            l.command,
            ["./default 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"]
        );
        assert_eq!(l.environment[executor_env::KIND], "rp1");
        assert_eq!(l.environment[executor_env::CORES], "4");
        let script = nm_launch_script(&l, "/logs");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "{}\nprintf '%s|%s' \"$SPARK_YARNAM_PROFILE_ID\" \"$ODD\"",
                script
                    .lines()
                    .filter(|l| l.starts_with("export "))
                    .collect::<Vec<_>>()
                    .join("\n")
            ))
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "1|$HOME `x` \"q\"");
        // The default kind is named now that the app has more than one.
        let plain = launcher.launch_spec(ExecutorId::new(1), 0, None, &c);
        assert_eq!(plain.environment[executor_env::KIND], "default");
        assert!(!plain.environment.contains_key("SPARK_YARNAM_PROFILE_ID"));
    }
}
