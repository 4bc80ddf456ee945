//! The command line: one subcommand per task a YARN user has.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use yarn_am_wire::service_data;

#[derive(Debug, Parser)]
#[command(
    name = "yarn-am",
    version,
    about = "Run elastic, locality-aware work on Hadoop YARN"
)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug). YARN_AM_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the cluster's NodeManagers with their racks and capacity.
    Nodes(NodesArgs),
    /// Print the container requests the allocator makes for one allocator state (JSON).
    Plan(PlanArgs),
    /// Submit an application whose ApplicationMaster is yarn-am.
    ///
    /// Staging: the yarn-am binary (the AM, and the executors of a --job), the AM's spec
    /// file and every --file are copied into a per-application folder, <ROOT>/<app-id>, and
    /// YARN localises them from there into the containers. The AM removes the folder when the
    /// application ends (success, failure on its last attempt, kill or SIGTERM); with --wait,
    /// submit removes it too, in case the AM never ran or was killed before it could.
    ///
    /// Without --webhdfs the folder is local (file:// URLs): only right when every
    /// NodeManager sees the same file system, e.g. a single-host cluster.
    ///
    /// With --webhdfs URL (or YARN_AM_WEBHDFS) the folder is on HDFS: files are uploaded
    /// through the NameNode's WebHDFS API as --user (user.name, simple auth), and the
    /// NodeManagers read them as hdfs:// URLs. Size and modification time come from HDFS
    /// (YARN checks them). The AM deletes the folder through WebHDFS too.
    Submit(Box<SubmitArgs>),
    /// Show an application's state as the RM reports it (exit 0 succeeded, 1 failed, 2 could not ask, 3 killed, 4 running).
    Status(AppArgs),
    /// Kill an application and wait until the RM reports it KILLED.
    Kill(AppArgs),
    /// Print an application's container logs: from the NodeManagers' web services while
    /// it runs; after it ends, with log aggregation on, from the files the NodeManagers
    /// wrote to HDFS (read through WebHDFS), else from the NodeManagers while they keep them.
    ///
    /// Without a selector every container's files are printed, each under a
    /// `==> CONTAINER/FILE <==` header. Exit 0 when something was printed, 1 when nothing
    /// has what was asked, 2 on bad input, an unreachable RM or NameNode, or aggregation
    /// that did not finish within --aggregation-wait.
    Logs(LogsArgs),
    /// List your yarn-am applications that have not ended (--all: every one the RM
    /// remembers), newest first.
    List(ListArgs),
    /// Run as the ApplicationMaster (YARN starts this in the AM container; not for humans).
    Am,
    /// Run as a job executor (the AM starts this in executor containers; not for humans).
    Executor,
    /// Read the split of an HDFS-input task (in its task's environment).
    #[command(subcommand)]
    Split(SplitCommand),
    /// Use an application's key-value store: `kv get|put|delete|list|wait [APP] ...`.
    ///
    /// With APP (an application id) the store is reached from outside with the driver's
    /// secret (`~/.yarn-am/<APP>.secret`) at the address the AM registered with the RM.
    /// Without it, inside a container of the app (an executor or one of its tasks), with that
    /// container's own KV key from its token file, which opens the store and nothing else.
    ///
    ///   get [APP] KEY            print the value (exit 1 if absent)
    ///   put [APP] KEY [VALUE]    store VALUE (stdin when absent or `-`); prints the version
    ///   delete [APP] KEY         remove KEY (exit 1 if it was absent)
    ///   list [APP] [PREFIX]      print the entries whose key starts with PREFIX, as JSON
    ///   wait [APP] KEY           wait until KEY holds a version above --after, then print it
    ///
    /// A first word that is an application id is APP (give it explicitly when a key looks
    /// like one); a VALUE that starts with `-` goes after `--`. In an --executor-command the
    /// binary is `./yarn-am`, in a job's task `"$YARN_AM_EXE"`.
    /// Exit 0 done, 1 absent or the wait ran out, 2 an error (413: over a limit).
    #[command(verbatim_doc_comment)]
    Kv(KvArgs),
}

/// What `yarn-am kv` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KvOp {
    Get,
    Put,
    Delete,
    List,
    Wait,
}

#[derive(Debug, Args)]
pub struct KvArgs {
    pub op: KvOp,
    /// [APP] and the operation's words (see above).
    #[arg(value_name = "WORDS")]
    pub words: Vec<String>,
    /// `wait`: a version the key must be above (a version printed by an earlier get/put).
    #[arg(long, default_value_t = 0)]
    pub after: u64,
    /// `wait`: seconds to wait in all before exit 1.
    #[arg(long, default_value_t = 300)]
    pub wait_timeout: u64,
    /// `get`/`wait`: print the entry as JSON (key, value, version) instead of the value.
    #[arg(long)]
    pub json: bool,
    /// With APP: the folder of driver secrets (`<app-id>.secret`).
    #[arg(long, env = "YARN_AM_SECRET_DIR")]
    pub secret_dir: Option<PathBuf>,
    #[command(flatten)]
    pub rm: RmArgs,
}

#[derive(Debug, Subcommand)]
pub enum SplitCommand {
    /// Write this task's split to stdout as records: what `{split.cat}` in a job's
    /// `inputs.command` runs. The split comes from YARN_AM_SPLIT_URL, _PATH, _OFFSET and
    /// _LENGTH; HDFS is read through WebHDFS with the container's HDFS delegation token
    /// (its token file), or as $USER on a cluster without security, from a replica on this
    /// host (NM_HOST) when there is one.
    Cat(SplitCatArgs),
}

#[derive(Debug, Args)]
pub struct SplitCatArgs {
    /// `text`: the lines that start in the split, the last one read to its end past the
    /// split (MapReduce's rule: each line in exactly one split); `bytes`: the raw range.
    #[arg(long, env = "YARN_AM_SPLIT_FORMAT", default_value = "text")]
    pub format: yarn_am_core::inputs::records::RecordFormat,
    /// Longest read past the split's end to finish its last line (text).
    #[arg(long, default_value_t = yarn_am_core::inputs::records::DEFAULT_MAX_LINE)]
    pub max_line_bytes: u64,
    /// Seconds any one WebHDFS call may take before it fails (a read gets 1 s more per
    /// MiB), and the longest silence of a DataNode mid-read before the next replica is tried.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub timeout: u64,
}

/// Where the ResourceManager's web address comes from: the flag, then
/// `yarn.resourcemanager.webapp.address` in `$YARN_CONF_DIR`/`$HADOOP_CONF_DIR`.
#[derive(Debug, Args)]
pub struct RmArgs {
    /// ResourceManager web address (host:port or URL).
    #[arg(long, env = "YARN_AM_RM_WEB")]
    pub rm_web: Option<String>,
    /// User name the RM sees (simple auth). Defaults to $USER.
    #[arg(long)]
    pub user: Option<String>,
    /// Kerberos principal to log in as from --keytab (e.g. alice@EXAMPLE.COM), as
    /// spark-submit takes it. Without --principal/--keytab, a cluster whose
    /// hadoop.security.authentication is kerberos is reached with the ticket `kinit` left in
    /// the default ticket cache.
    #[arg(long, requires = "keytab", value_name = "PRINCIPAL")]
    pub principal: Option<String>,
    /// Keytab holding the key of --principal. The login goes into a private in-memory
    /// ticket cache; the user's own cache is not touched.
    #[arg(long, requires = "principal", value_name = "FILE")]
    pub keytab: Option<PathBuf>,
    /// Seconds to wait for any one RM call before giving up.
    #[arg(long, default_value_t = 30)]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct NodesArgs {
    #[command(flatten)]
    pub rm: RmArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Allocation strategy: `spark` (Spark's exact placement) or `default` (ours).
    #[arg(long, default_value = "default")]
    pub strategy: String,
    /// Allocator state as JSON; `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct AppArgs {
    #[command(flatten)]
    pub rm: RmArgs,
    /// Application id, e.g. application_1700000000000_0001.
    pub app_id: String,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub rm: RmArgs,
    /// Also the applications that have ended.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    #[command(flatten)]
    pub app: AppArgs,
    /// Only the AM's container (each attempt's).
    #[arg(long, conflicts_with_all = ["container", "task"])]
    pub am: bool,
    /// Only this container.
    #[arg(long, value_name = "ID", conflicts_with = "task")]
    pub container: Option<String>,
    /// Only this task of a --job, its last attempt: its own stdout (or --file stderr).
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// Only this file (stdout, stderr or any name the container has).
    #[arg(long, value_name = "NAME")]
    pub file: Option<String>,
    /// Keep printing what is appended, until the application ends.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// NameNode web address for reading aggregated logs after the app ends (default:
    /// the Hadoop configuration's dfs.namenode.http-address).
    #[arg(long, env = "YARN_AM_WEBHDFS", value_name = "URL")]
    pub webhdfs: Option<String>,
    /// After the app ends, wait at most this long for the NodeManagers to finish
    /// aggregating its logs.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub aggregation_wait: u64,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub rm: RmArgs,
    /// RM scheduler address for the AM (default: yarn-site.xml, else the RM host:8030).
    #[arg(long)]
    pub rm_scheduler: Option<String>,
    /// Application name.
    #[arg(long, default_value = "yarn-am")]
    pub name: String,
    /// YARN queue.
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// Application tag (repeatable).
    #[arg(long)]
    pub tag: Vec<String>,
    /// AM attempts YARN may make.
    #[arg(long, default_value_t = 2)]
    pub max_attempts: u32,
    /// Failed AM attempts older than this many milliseconds no longer count towards
    /// --max-attempts (for long-running apps); default: every failure counts.
    #[arg(long, value_name = "MS")]
    pub attempt_failures_validity_interval: Option<i64>,
    /// The application's priority in its queue (higher first; the RM caps it at
    /// yarn.cluster.max-application-priority and the queue's own limit).
    #[arg(long)]
    pub priority: Option<i32>,
    /// The RM kills the application this many seconds after submission, saying so in
    /// its diagnostics (YARN's LIFETIME timeout).
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub lifetime: Option<u64>,
    /// Who else may view the app, its tracking page and its logs: YARN's ACL syntax, users
    /// then a space and groups (`"bob,carol ops"`, `*` for everyone); enforced where the
    /// cluster sets yarn.acl.enable.
    #[arg(long, value_name = "ACL", value_parser = parse_acl)]
    pub view_acl: Option<String>,
    /// Who else may kill the app, move it or change its priority (same syntax).
    #[arg(long, value_name = "ACL", value_parser = parse_acl)]
    pub modify_acl: Option<String>,
    /// Only log files whose name matches this Java regular expression are aggregated to
    /// HDFS at the app's end (YARN's log-include-pattern; e.g. `^stdout$`).
    #[arg(long, value_name = "REGEX")]
    pub log_include_pattern: Option<String>,
    /// Log files whose name matches this are not aggregated at the app's end.
    #[arg(long, value_name = "REGEX")]
    pub log_exclude_pattern: Option<String>,
    /// Like --log-include-pattern, for the uploads while the app runs on clusters that roll
    /// logs (yarn.nodemanager.log-aggregation.roll-monitoring-interval-seconds).
    #[arg(long, value_name = "REGEX")]
    pub rolled_log_include_pattern: Option<String>,
    /// Like --log-exclude-pattern, for the uploads while the app runs.
    #[arg(long, value_name = "REGEX")]
    pub rolled_log_exclude_pattern: Option<String>,
    /// Ask for the executors in this node-label partition only (one label, as YARN takes
    /// it); the queue must be allowed to use it (accessible-node-labels).
    #[arg(long, value_name = "LABEL", value_parser = parse_node_label)]
    pub node_label: Option<String>,
    /// A countable resource each executor asks for besides memory and vcores, NAME=COUNT
    /// (repeatable): `yarn.io/gpu=1`, `yarn.io/fpga=1` or a type the cluster declares in
    /// yarn.resource-types. The executor finds what it got in $YARN_AM_EXECUTOR_RESOURCES
    /// (`name=count,...`).
    #[arg(long, value_name = "NAME=COUNT", value_parser = parse_resource)]
    pub executor_resource: Vec<(String, i64)>,
    /// A further kind of executor, each with its own size, count, resources, label and
    /// command (repeatable): NAME:memory=MB,vcores=N[,executors=N][,max=N][,min=N]
    /// [,label=LABEL][,resource.TYPE=COUNT...][,command=CMD]. `command=` comes last and
    /// takes the rest, commas included (default: --executor-command). Each executor finds
    /// its kind in $YARN_AM_EXECUTOR_KIND. A job declares its kinds in the job file.
    #[arg(long, value_name = "NAME:KEY=VALUE,...", value_parser = parse_executor_kind)]
    pub executor_kind: Vec<yarn_am_wire::spec::ExecutorKind>,
    /// Room for executor kinds a driver declares while the app runs (`POST /v1/kinds`):
    /// the kinds the app may have in all, the default and --executor-kind ones included
    /// (at most 64; default: those alone, so none can be declared). Fixed at submit, as
    /// each kind numbers its executors in its own stripe of ids. Not with a job.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub max_executor_kinds: Option<u32>,
    /// Data for the NodeManagers' auxiliary service NAME in every executor's launch context
    /// (repeatable): NAME alone for none (Spark's shuffle service without authentication),
    /// NAME=@FILE for the file's bytes (at most 64 KiB; never on the command line, as it is
    /// often a secret). Every NodeManager must run NAME (yarn.nodemanager.aux-services), or
    /// it refuses the executors.
    #[arg(long, value_name = "NAME[=@FILE]", value_parser = ServiceDataParser)]
    pub service_data: Vec<service_data::ServiceData>,
    /// Run the AM in this node-label partition.
    #[arg(long, value_name = "LABEL", value_parser = parse_node_label)]
    pub am_node_label: Option<String>,
    /// The application type the RM shows (`yarn-am list` lists YARN-AM only).
    #[arg(long, default_value = yarn_am_wire::APPLICATION_TYPE)]
    pub application_type: String,
    /// AM container memory in MB.
    #[arg(long, default_value_t = 256)]
    pub am_memory: i64,
    /// AM container vcores.
    #[arg(long, default_value_t = 1)]
    pub am_vcores: i32,
    /// A countable resource the AM's own container asks besides memory and vcores,
    /// NAME=COUNT (repeatable), e.g. `yarn.io/gpu=1` for a driver beside the AM that needs
    /// one. The app is then submitted over the RM's client port (yarn.resourcemanager.address,
    /// Hadoop IPC): the REST submission drops such resources. Not on a Kerberos cluster yet.
    #[arg(long, value_name = "NAME=COUNT", value_parser = parse_resource)]
    pub am_resource: Vec<(String, i64)>,
    /// RM client address (ApplicationClientProtocol) for a submission with --am-resource
    /// (default: yarn-site.xml's yarn.resourcemanager.address, else the RM host:8032).
    #[arg(long, value_name = "HOST:PORT")]
    pub rm_client: Option<String>,
    /// Environment for the AM, KEY=VALUE (repeatable; the value exactly as given).
    #[arg(long)]
    pub env: Vec<String>,
    /// Run this job (JSON; see conf/examples/job.json) with the embedded driver. The job's
    /// executor settings replace the --executor-* flags.
    #[arg(long)]
    pub job: Option<PathBuf>,
    /// Shell command each executor container runs with bash, exactly as given (quotes,
    /// `$`, backticks, newlines: it travels as a script file). Its log directory is
    /// $YARN_AM_LOG_DIR; stdout and stderr go there.
    #[arg(long, default_value = "sleep 3600")]
    pub executor_command: String,
    /// Without --job: keep the app running after its executors exit, until a driver
    /// finishes it or it is killed. By default an app without a job ends when each of its
    /// --executors has exited 0 (failed ones are restarted up to the failure limit), unless a
    /// driver states a demand first.
    #[arg(long, conflicts_with = "job")]
    pub keep_running: bool,
    /// A driver the AM runs in its own container with bash (exactly as given, like
    /// --executor-command), e.g. Spark's driver in cluster deploy mode. It reaches the driver
    /// API at $YARN_AM_DRIVER_URL with the secret file $YARN_AM_SECRET_FILE; its stdout and
    /// stderr are driver.stdout and driver.stderr among the AM's logs; it may write a short
    /// message for the app's diagnostics to $YARN_AM_DRIVER_DIAGNOSTICS. Its exit ends the
    /// app: 0 SUCCEEDED, else FAILED. The AM container also gets every --file and --archive;
    /// --am-memory must hold the driver too.
    #[arg(long, conflicts_with = "job", value_name = "CMD")]
    pub driver_command: Option<String>,
    /// Executor failures after which the AM fails the app (default: twice --max-executors,
    /// at least 3).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_executor_failures: Option<u32>,
    /// Executor failures older than this many milliseconds no longer count towards
    /// --max-executor-failures (Spark's spark.executor.failuresValidityInterval; for
    /// long-running apps). Default: every failure counts.
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    pub executor_failures_validity_interval: Option<u64>,
    /// Executor failures on one host within --host-exclusion-window that keep new
    /// executors off it for --host-exclusion-timeout (Spark's
    /// spark.excludeOnFailure.application.maxFailedExecutorsPerNode); 0 never excludes a
    /// host. Default 2. Failed launches and exits that count against the app count.
    #[arg(long, value_name = "N")]
    pub host_exclusion_failures: Option<u32>,
    /// How far back --host-exclusion-failures are counted, in seconds. Default 600.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub host_exclusion_window: Option<u64>,
    /// How long a host stays excluded after its failures, in seconds (Spark's
    /// spark.excludeOnFailure.timeout). Default 300.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub host_exclusion_timeout: Option<u64>,
    /// Executor container memory in MB.
    #[arg(long, default_value_t = 256)]
    pub executor_memory: i64,
    /// Executor container vcores.
    #[arg(long, default_value_t = 1)]
    pub executor_vcores: i32,
    /// Executors to start with.
    #[arg(long, default_value_t = 2)]
    pub executors: u32,
    /// Fewest executors the AM keeps.
    #[arg(long, default_value_t = 0)]
    pub min_executors: u32,
    /// Most executors the AM runs (default: --executors).
    #[arg(long)]
    pub max_executors: Option<u32>,
    /// Environment for executors, KEY=VALUE (repeatable; the value exactly as given).
    #[arg(long)]
    pub executor_env: Vec<String>,
    /// File shipped into every executor's working directory as NAME (default: its own
    /// name; repeatable). A local PATH is uploaded (with --webhdfs through a
    /// content-addressed cache: bytes already staged are not sent again); an hdfs:// URL is
    /// referenced in place.
    #[arg(long, value_name = "PATH[#NAME]")]
    pub file: Vec<String>,
    /// Archive (zip, tar, tar.gz, jar) the NodeManager unpacks into the folder NAME of every
    /// executor's working directory (repeatable; local or hdfs:// as for --file).
    #[arg(long, value_name = "PATH[#NAME]")]
    pub archive: Vec<String>,
    /// Ship every --file and --archive of this submit as a PUBLIC resource: each node's
    /// NodeManager localises it once, into its cache shared by all users' apps (as
    /// spark.yarn.archive often is). Needs --webhdfs: a local file goes to
    /// <ROOT>/.public/<sha256>/ (readable by all), an hdfs:// one must be readable by others
    /// with every folder above it o+x. A local file others cannot read is refused as a
    /// likely secret; yarn-am's own files (spec, keytab, tokens) are never public.
    #[arg(long)]
    pub public: bool,
    /// Staging root; the app's files go to <ROOT>/<app-id>. Without --webhdfs: a local
    /// folder every NodeManager sees (default /tmp/yarn-am-staging). With --webhdfs: an
    /// absolute HDFS path (default /user/<user>/.yarn-am-staging).
    #[arg(long, env = "YARN_AM_STAGING_DIR", value_name = "ROOT")]
    pub staging_dir: Option<String>,
    /// Stage on HDFS through WebHDFS at this NameNode web address (http://HOST:PORT,
    /// HOST:PORT or webhdfs://HOST:PORT; dfs.namenode.http-address, port 9870 by default).
    #[arg(long, env = "YARN_AM_WEBHDFS", value_name = "URL")]
    pub webhdfs: Option<String>,
    /// With --webhdfs: the file system URL the NodeManagers read the staged files from
    /// (default: the NameNode's RPC address as the NameNode reports it, hdfs://HOST:PORT).
    #[arg(long, value_name = "URI", requires = "webhdfs")]
    pub hdfs_uri: Option<String>,
    /// With --webhdfs: seconds any one WebHDFS call may take (uploads get 1 s more per MiB).
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub webhdfs_timeout: u64,
    /// Folder for per-application driver-API secrets (`<app-id>.secret`, mode 0600).
    #[arg(long, env = "YARN_AM_SECRET_DIR")]
    pub secret_dir: Option<PathBuf>,
    /// Binary to ship as the AM (default: this one).
    #[arg(long)]
    pub am_binary: Option<PathBuf>,
    /// Follow the application until it ends and exit with its outcome
    /// (0 succeeded, 1 failed, 3 killed, 4 still running at --wait-timeout; 2 when yarn-am
    /// itself failed: bad input, RM unreachable).
    #[arg(long)]
    pub wait: bool,
    /// With --wait: stop following after this many seconds and exit 4 (the app keeps
    /// running).
    #[arg(long, default_value_t = 86400)]
    pub wait_timeout: u64,
    /// With --job: seconds an executor may go without polling the AM (counted from its
    /// launch until its first poll) before the AM declares it lost, releases its container
    /// and runs its tasks elsewhere (Spark's spark.network.timeout). At most a week.
    #[arg(long, default_value_t = 120, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub executor_silence_timeout: u64,
    /// Allocation strategy of the AM: `default` (ours) or `spark` (Spark's exact placement,
    /// for comparisons).
    #[arg(long, default_value = "default")]
    pub strategy: yarn_am_core::allocator::Strategy,
}

/// A node label as YARN names them (`CommonNodeLabelsManager`: a letter or digit, then
/// letters, digits, `-` and `_`, at most 255): YARN takes one label per request, so `&&` and
/// `||` expressions are refused here rather than by the RM at the first allocate.
fn parse_node_label(s: &str) -> Result<String, String> {
    let mut chars = s.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    if first_ok
        && s.len() <= 255
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?} is not a node label (one label: a letter or digit, then letters, digits, - or _)"
        ))
    }
}

/// `--service-data`'s parser for clap: [`service_data::parse`], whose error clap prints as it is. (A
/// plain `fn` parser's error would be printed after the argument, which may hold a secret
/// someone typed in place of `@FILE`.)
#[derive(Clone, Copy, Debug)]
pub struct ServiceDataParser;

impl clap::builder::TypedValueParser for ServiceDataParser {
    type Value = service_data::ServiceData;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<service_data::ServiceData, clap::Error> {
        let fail = |msg: String| {
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("--service-data: {msg}\n"),
            )
            .with_cmd(cmd)
        };
        let text = value
            .to_str()
            .ok_or_else(|| fail("not UTF-8".to_string()))?;
        service_data::parse(text).map_err(fail)
    }
}

/// NAME=COUNT of a countable resource: YARN's resource names (`yarn.io/gpu`, `example.com/x`)
/// and a count of at least 1; memory and vcores have their own flags.
fn parse_executor_kind(s: &str) -> Result<yarn_am_wire::spec::ExecutorKind, String> {
    let (name, rest) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?} is not NAME:memory=MB,vcores=N,..."))?;
    if !yarn_am_core::driver::job::valid_kind_name(name) {
        return Err(format!(
            "{name:?} is not a kind name: 1-32 letters, digits, `-` or `_`, and not `default`"
        ));
    }
    // `command=` takes the rest of the value as it is.
    let (keys, command) = match rest.find("command=") {
        Some(0) => ("", Some(&rest["command=".len()..])),
        Some(at) if rest[..at].ends_with(',') => {
            (&rest[..at - 1], Some(&rest[at + "command=".len()..]))
        }
        _ => (rest, None),
    };
    let number = |key: &str, v: &str| -> Result<u32, String> {
        v.parse::<u32>()
            .map_err(|_| format!("{name}: {key}={v:?} is not a whole number"))
    };
    let (mut memory, mut vcores, mut executors, mut max, mut min) = (None, None, 1, None, 0);
    let mut label = None;
    let mut resources = std::collections::BTreeMap::new();
    for kv in keys.split(',').filter(|kv| !kv.is_empty()) {
        let (key, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("{name}: {kv:?} is not KEY=VALUE"))?;
        match key {
            "memory" => memory = Some(number(key, v)?),
            "vcores" => vcores = Some(number(key, v)?),
            "executors" => executors = number(key, v)?,
            "max" => max = Some(number(key, v)?),
            "min" => min = number(key, v)?,
            "label" => label = Some(parse_node_label(v)?),
            _ => match key.strip_prefix("resource.") {
                Some(r) => {
                    let (r, n) = parse_resource(&format!("{r}={v}"))?;
                    resources.insert(r, n);
                }
                None => {
                    return Err(format!(
                        "{name}: unknown key {key:?} (memory, vcores, executors, max, min, label,                          resource.TYPE, command)"
                    ))
                }
            },
        }
    }
    let memory = memory
        .filter(|&m| m > 0)
        .ok_or_else(|| format!("{name}: memory=MB (at least 1) is required"))?;
    let vcores = vcores
        .filter(|&v| v > 0 && i32::try_from(v).is_ok())
        .ok_or_else(|| format!("{name}: vcores=N (at least 1) is required"))?;
    let max = max.unwrap_or(executors.max(min)).max(1);
    if min > max || executors > max {
        return Err(format!(
            "{name}: executors ({executors}) and min ({min}) must not exceed max ({max})"
        ));
    }
    if command.is_some_and(|c| c.trim().is_empty()) {
        return Err(format!("{name}: command= is empty"));
    }
    Ok(yarn_am_wire::spec::ExecutorKind {
        name: name.to_string(),
        memory_mb: i64::from(memory),
        vcores: vcores as i32,
        initial: executors,
        min,
        max,
        node_label: label,
        resources,
        command: command.map(str::to_string),
    })
}

fn parse_resource(s: &str) -> Result<(String, i64), String> {
    let (name, count) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not NAME=COUNT (e.g. yarn.io/gpu=1)"))?;
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'));
    if !name_ok {
        return Err(format!(
            "{name:?} is not a resource name such as yarn.io/gpu"
        ));
    }
    if matches!(name, "memory-mb" | "memory" | "vcores") {
        return Err(format!(
            "{name} has its own flags (--executor-memory and --executor-vcores, --am-memory and --am-vcores)"
        ));
    }
    match count.parse::<i64>() {
        Ok(n) if n >= 1 => Ok((name.to_string(), n)),
        _ => Err(format!(
            "the count of {name} is not a whole number of at least 1: {count:?}"
        )),
    }
}

fn parse_acl(s: &str) -> Result<String, String> {
    yarn_client::acl::check_acl(s)
        .map(|()| s.to_string())
        .map_err(|e| e.to_string())
}

impl SubmitArgs {
    /// The app's ACLs from --view-acl / --modify-acl.
    pub fn acls(&self) -> yarn_client::acl::AppAcls {
        yarn_client::acl::AppAcls {
            view: self.view_acl.clone(),
            modify: self.modify_acl.clone(),
        }
    }

    /// Which log files the NodeManagers aggregate, from the --*log-*-pattern flags.
    pub fn log_aggregation(&self) -> yarn_client::rest::LogAggregation {
        yarn_client::rest::LogAggregation {
            include: self.log_include_pattern.clone(),
            exclude: self.log_exclude_pattern.clone(),
            rolled_include: self.rolled_log_include_pattern.clone(),
            rolled_exclude: self.rolled_log_exclude_pattern.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_executor_kind;

    #[test]
    fn an_executor_kind_takes_its_keys_and_the_rest_after_command() {
        let k = parse_executor_kind(
            "accel:memory=512,vcores=2,executors=2,max=3,label=gpu,\
             resource.example.com/accelerator=1,command=echo a,b; env",
        )
        .unwrap();
        assert_eq!(
            (
                k.name.as_str(),
                k.memory_mb,
                k.vcores,
                k.initial,
                k.min,
                k.max
            ),
            ("accel", 512, 2, 2, 0, 3)
        );
        assert_eq!(k.node_label.as_deref(), Some("gpu"));
        assert_eq!(k.resources.get("example.com/accelerator"), Some(&1));
        assert_eq!(k.command.as_deref(), Some("echo a,b; env"));
        let k = parse_executor_kind("small:memory=128,vcores=1").unwrap();
        assert_eq!((k.initial, k.max, k.command), (1, 1, None));
    }

    #[test]
    fn a_bad_executor_kind_says_what_is_wrong() {
        let err = |s: &str| parse_executor_kind(s).unwrap_err();
        assert!(err("accel").contains("NAME:memory=MB"));
        assert!(err("default:memory=1,vcores=1").contains("not a kind name"));
        assert!(err("accel:vcores=1").contains("memory=MB"));
        assert!(err("accel:memory=1").contains("vcores=N"));
        assert!(err("accel:memory=1,vcores=1,colour=red").contains("unknown key \"colour\""));
        assert!(err("accel:memory=1,vcores=1,executors=3,max=2").contains("must not exceed"));
        assert!(err("accel:memory=x,vcores=1").contains("not a whole number"));
        assert!(err("accel:memory=1,vcores=1,resource.vcores=1").contains("own flags"));
        assert!(err("accel:memory=1,vcores=1,command= ").contains("command= is empty"));
    }
}
