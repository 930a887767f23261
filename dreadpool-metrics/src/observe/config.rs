//! What the environment asks to be observed: the three variables, parsed
//! into an [`ObserveConfig`] by a pure function of a lookup.

use crate::endpoint::Endpoint;
use crate::error::ObserveEnvError;
use dreadpool_core::RecordLevel;
use std::net::SocketAddr;

/// Where to serve the pool to `dreadpool-top --attach`: a socket path or a
/// loopback `host:port`.
pub const SERVE_VAR: &str = "DREADPOOL_SERVE";
/// Where to serve a Prometheus scrape endpoint: a loopback `host:port`.
pub const PROMETHEUS_VAR: &str = "DREADPOOL_PROMETHEUS";
/// The flight recorder's level: `off`, `scheduler` or `tasks`.
pub const RECORD_VAR: &str = "DREADPOOL_RECORD";

/// What to serve, read from [`SERVE_VAR`], [`PROMETHEUS_VAR`] and
/// [`RECORD_VAR`]; [`start`](Self::start) starts it.
///
/// ```
/// use dreadpool::RecordLevel;
/// use dreadpool::metrics::observe::ObserveConfig;
/// use std::collections::HashMap;
///
/// let vars = HashMap::from([("DREADPOOL_SERVE", "/tmp/app.sock")]);
/// let config = ObserveConfig::from_lookup(|name| vars.get(name).map(|v| v.to_string()))?;
/// assert_eq!(config.serve().and_then(|e| e.path()).unwrap(), std::path::Path::new("/tmp/app.sock"));
/// // Serving, and no level asked for: tasks, so recordings show every task.
/// assert_eq!(config.record_level(), Some(RecordLevel::Tasks));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObserveConfig {
    serve: Option<Endpoint>,
    prometheus: Option<SocketAddr>,
    record: Option<RecordLevel>,
}

impl ObserveConfig {
    /// Reads the three variables from the process's environment.
    ///
    /// # Errors
    ///
    /// As [`from_lookup`](Self::from_lookup), and
    /// [`ObserveEnvError::NotUnicode`] for a value that is not UTF-8.
    pub fn from_env() -> Result<Self, ObserveEnvError> {
        let mut values = Vec::with_capacity(3);
        for var in [SERVE_VAR, PROMETHEUS_VAR, RECORD_VAR] {
            match std::env::var_os(var) {
                None => {}
                Some(value) => match value.into_string() {
                    Ok(value) => values.push((var, value)),
                    Err(_) => return Err(ObserveEnvError::NotUnicode { var }),
                },
            }
        }
        Self::from_lookup(|name| {
            values
                .iter()
                .find(|(var, _)| *var == name)
                .map(|(_, value)| value.clone())
        })
    }

    /// Reads the variables through `lookup` (a variable's name to its value,
    /// `None` when unset): the parsing, apart from the process's
    /// environment, so that it can be tested and reused. An empty (or
    /// all-blank) value reads as unset.
    ///
    /// A `host:port` with a name (`localhost:6670`) is resolved here.
    ///
    /// # Errors
    ///
    /// [`ObserveEnvError::Addr`] for an address that does not parse or
    /// resolve, [`ObserveEnvError::NotLoopback`] for a TCP address off this
    /// machine, [`ObserveEnvError::NotHostPort`] for a Prometheus address
    /// that is not `host:port`, and [`ObserveEnvError::Level`] for an
    /// unknown level.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ObserveEnvError> {
        let read = |var: &'static str| {
            lookup(var)
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
        };
        let serve = read(SERVE_VAR)
            .map(|value| parse_serve(SERVE_VAR, &value))
            .transpose()?;
        let prometheus = read(PROMETHEUS_VAR)
            .map(|value| parse_prometheus(PROMETHEUS_VAR, &value))
            .transpose()?;
        let record = read(RECORD_VAR)
            .map(|value| {
                value
                    .to_ascii_lowercase()
                    .parse::<RecordLevel>()
                    .map_err(|_| ObserveEnvError::Level {
                        var: RECORD_VAR,
                        value,
                    })
            })
            .transpose()?;
        Ok(ObserveConfig {
            serve,
            prometheus,
            record,
        })
    }

    /// Where the pool is to be served to `dreadpool-top --attach`, if anywhere.
    pub fn serve(&self) -> Option<&Endpoint> {
        self.serve.as_ref()
    }

    /// Where the Prometheus endpoint is to listen, if anywhere.
    pub fn prometheus(&self) -> Option<SocketAddr> {
        self.prometheus
    }

    /// The level [`start`](Self::start) sets on the pool: the one asked
    /// for; else [`RecordLevel::Tasks`] when serving (a recording pulled by
    /// `dreadpool-top` then shows every task and `explain` can name why each
    /// waited); else `None`, which leaves the pool's level alone.
    pub fn record_level(&self) -> Option<RecordLevel> {
        match (self.record, &self.serve) {
            (Some(level), _) => Some(level),
            (None, Some(_)) => Some(RecordLevel::Tasks),
            (None, None) => None,
        }
    }

    /// Whether nothing at all is asked for (every variable unset).
    pub fn is_off(&self) -> bool {
        *self == ObserveConfig::default()
    }
}

fn parse_serve(var: &'static str, value: &str) -> Result<Endpoint, ObserveEnvError> {
    let endpoint = Endpoint::parse(value).map_err(|source| ObserveEnvError::Addr {
        var,
        value: value.to_string(),
        source,
    })?;
    // The exporter refuses it too, but saying so here names the variable.
    match endpoint.socket_addr() {
        Some(addr) if !addr.ip().is_loopback() => Err(ObserveEnvError::NotLoopback {
            var,
            value: value.to_string(),
        }),
        _ => Ok(endpoint),
    }
}

fn parse_prometheus(var: &'static str, value: &str) -> Result<SocketAddr, ObserveEnvError> {
    let endpoint = Endpoint::parse(value).map_err(|source| ObserveEnvError::Addr {
        var,
        value: value.to_string(),
        source,
    })?;
    match endpoint.socket_addr() {
        None => Err(ObserveEnvError::NotHostPort {
            var,
            value: value.to_string(),
        }),
        Some(addr) if !addr.ip().is_loopback() => Err(ObserveEnvError::NotLoopback {
            var,
            value: value.to_string(),
        }),
        Some(addr) => Ok(addr),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    fn parse(vars: &[(&str, &str)]) -> Result<ObserveConfig, ObserveEnvError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ObserveConfig::from_lookup(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_set_is_off_and_leaves_the_level_alone() {
        let config = parse(&[]).unwrap();
        assert!(config.is_off());
        assert_eq!(config.serve(), None);
        assert_eq!(config.prometheus(), None);
        assert_eq!(config.record_level(), None);
        // Empty and blank values read as unset.
        let blank = parse(&[(SERVE_VAR, ""), (PROMETHEUS_VAR, "  "), (RECORD_VAR, "")]).unwrap();
        assert!(blank.is_off());
    }

    #[test]
    fn serving_a_socket_path_records_tasks_by_default() {
        let config = parse(&[(SERVE_VAR, "/tmp/app.sock")]).unwrap();
        assert_eq!(
            config.serve().and_then(Endpoint::path),
            Some(Path::new("/tmp/app.sock"))
        );
        assert_eq!(config.record_level(), Some(RecordLevel::Tasks));
        assert!(!config.is_off());
    }

    #[test]
    fn serving_loopback_tcp_is_accepted_and_a_level_given_wins() {
        let config = parse(&[(SERVE_VAR, "127.0.0.1:6670"), (RECORD_VAR, "Scheduler")]).unwrap();
        assert_eq!(
            config.serve().and_then(Endpoint::socket_addr),
            Some("127.0.0.1:6670".parse().unwrap())
        );
        assert_eq!(config.record_level(), Some(RecordLevel::Scheduler));
        // A level alone, without serving, is applied as given.
        let off = parse(&[(RECORD_VAR, "off")]).unwrap();
        assert_eq!(off.record_level(), Some(RecordLevel::Off));
    }

    #[test]
    fn a_non_loopback_serve_address_is_refused_naming_the_variable() {
        let error = parse(&[(SERVE_VAR, "192.0.2.1:6670")]).unwrap_err();
        assert!(
            matches!(error, ObserveEnvError::NotLoopback { var, .. } if var == SERVE_VAR),
            "{error:?}"
        );
        assert!(error.to_string().contains("DREADPOOL_SERVE"), "{error}");
    }

    #[test]
    fn the_prometheus_address_must_be_a_loopback_host_and_port() {
        let config = parse(&[(PROMETHEUS_VAR, "127.0.0.1:9187")]).unwrap();
        assert_eq!(config.prometheus(), Some("127.0.0.1:9187".parse().unwrap()));
        // Prometheus alone does not switch the recorder.
        assert_eq!(config.record_level(), None);
        let path = parse(&[(PROMETHEUS_VAR, "/tmp/metrics.sock")]).unwrap_err();
        assert!(
            matches!(path, ObserveEnvError::NotHostPort { var, .. } if var == PROMETHEUS_VAR),
            "{path:?}"
        );
        let remote = parse(&[(PROMETHEUS_VAR, "[2001:db8::1]:9187")]).unwrap_err();
        assert!(
            matches!(remote, ObserveEnvError::NotLoopback { var, .. } if var == PROMETHEUS_VAR),
            "{remote:?}"
        );
    }

    #[test]
    fn an_unknown_level_is_refused_with_its_value() {
        let error = parse(&[(SERVE_VAR, "/tmp/a.sock"), (RECORD_VAR, "everything")]).unwrap_err();
        assert!(
            matches!(&error, ObserveEnvError::Level { var, value } if *var == RECORD_VAR && value == "everything"),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("off, scheduler or tasks"),
            "{error}"
        );
    }

    #[test]
    fn an_unparsable_address_is_an_address_error() {
        let error = parse(&[(SERVE_VAR, "unix:")]).unwrap_err();
        assert!(
            matches!(error, ObserveEnvError::Addr { var, .. } if var == SERVE_VAR),
            "{error:?}"
        );
    }
}
