//! Split mode: the chat page is delivered over several routes; when every route has failed
//! (a Remote Development backend has no UI to draw it in), the servers still serve, and the
//! host is asked to say so with the configuration to copy.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde_json::Value;

pub use ide_mcp_protocol::contract::SPLIT_MODE_MESSAGE;

/// What the host shows in split mode.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitModeNotice {
    /// [`SPLIT_MODE_MESSAGE`].
    pub message: String,
    /// The ready `mcpServers` block for the live servers.
    pub configuration: Value,
}

/// How one delivery route ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RouteOutcome {
    /// Not reported yet.
    Pending,
    /// The page arrived this way.
    Delivered,
    /// This route failed, and why.
    Failed(String),
}

/// What a report means for the project.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeliveryState {
    /// Some routes have not reported yet.
    Waiting,
    /// The page was shown: no split mode.
    Shown,
    /// Every route failed, and this report is the one that found out: enter split mode now.
    EnterSplitMode,
    /// Every route failed, and split mode was already entered.
    InSplitMode,
}

/// The delivery routes of one project's chat page.
#[derive(Debug, Default)]
pub struct PageDelivery {
    state: Mutex<Routes>,
}

#[derive(Debug, Default)]
struct Routes {
    outcomes: BTreeMap<String, RouteOutcome>,
    split_mode_entered: bool,
}

impl PageDelivery {
    /// Declares a route that will report.
    pub fn register_route(&self, route: &str) {
        self.lock()
            .outcomes
            .entry(route.to_owned())
            .or_insert(RouteOutcome::Pending);
    }

    /// Records how a route ended (an unregistered route is registered by its report) and
    /// says what that means. `EnterSplitMode` is returned once.
    pub fn report(&self, route: &str, outcome: RouteOutcome) -> DeliveryState {
        let mut routes = self.lock();
        routes.outcomes.insert(route.to_owned(), outcome);
        let outcomes = routes.outcomes.values();
        let mut all_failed = true;
        for outcome in outcomes {
            match outcome {
                RouteOutcome::Delivered => return DeliveryState::Shown,
                RouteOutcome::Pending => all_failed = false,
                RouteOutcome::Failed(_) => {}
            }
        }
        if !all_failed {
            return DeliveryState::Waiting;
        }
        if routes.split_mode_entered {
            return DeliveryState::InSplitMode;
        }
        routes.split_mode_entered = true;
        DeliveryState::EnterSplitMode
    }

    /// Every route and its outcome, by name.
    pub fn outcomes(&self) -> Vec<(String, RouteOutcome)> {
        self.lock()
            .outcomes
            .iter()
            .map(|(route, outcome)| (route.clone(), outcome.clone()))
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> RouteOutcome {
        RouteOutcome::Failed("no JCEF on this backend".to_owned())
    }

    #[test]
    fn split_mode_is_entered_once_when_every_route_failed() {
        let delivery = PageDelivery::default();
        delivery.register_route("jcef");
        delivery.register_route("browser");
        assert_eq!(delivery.report("jcef", failed()), DeliveryState::Waiting);
        assert_eq!(
            delivery.report("browser", failed()),
            DeliveryState::EnterSplitMode
        );
        assert_eq!(
            delivery.report("browser", failed()),
            DeliveryState::InSplitMode
        );
    }

    #[test]
    fn one_delivered_route_means_the_page_was_shown() {
        let delivery = PageDelivery::default();
        delivery.register_route("jcef");
        delivery.register_route("browser");
        assert_eq!(delivery.report("jcef", failed()), DeliveryState::Waiting);
        assert_eq!(
            delivery.report("browser", RouteOutcome::Delivered),
            DeliveryState::Shown
        );
    }
}
