//! The chat page's delivery routes that Java reports on, by handle.
//!
//! A `PageDelivery` lives before any server set does (the servers start when every route has
//! failed), so it has its own table. Like server-set handles, these are keys, never pointers.

use std::sync::Arc;

use ide_mcp_server::page_delivery::{DeliveryState, PageDelivery, RouteOutcome};
use serde_json::{json, Value};

use crate::error::BridgeError;
use crate::handles::HandleTable;

static DELIVERIES: HandleTable<Arc<PageDelivery>> = HandleTable::new();

/// Makes a new, empty page delivery and returns its handle (never 0).
pub fn create() -> i64 {
    DELIVERIES.insert(Arc::new(PageDelivery::default()))
}

/// The page delivery behind `handle`; the table's lock is released before it is used.
pub fn get(handle: i64) -> Result<Arc<PageDelivery>, BridgeError> {
    DELIVERIES.get(handle).ok_or_else(|| {
        BridgeError::IllegalState(format!(
            "no page delivery has handle {handle}: it was freed already, or never made"
        ))
    })
}

/// Frees a page delivery; returns whether it existed.
pub fn free(handle: i64) -> bool {
    DELIVERIES.remove(handle).is_some()
}

/// How many page deliveries are alive (for leak tests).
pub fn live_count() -> usize {
    DELIVERIES.len()
}

/// The number Java's `PageDelivery.State` uses for a state.
pub fn state_code(state: &DeliveryState) -> i32 {
    match state {
        DeliveryState::Waiting => 0,
        DeliveryState::Shown => 1,
        DeliveryState::EnterSplitMode => 2,
        DeliveryState::InSplitMode => 3,
    }
}

/// `[{"route", "outcome": "pending"|"delivered"|"failed", "reason"?}]`, by route name.
pub fn outcomes_json(delivery: &PageDelivery) -> String {
    let outcomes: Vec<Value> = delivery
        .outcomes()
        .into_iter()
        .map(|(route, outcome)| match outcome {
            RouteOutcome::Pending => json!({"route": route, "outcome": "pending"}),
            RouteOutcome::Delivered => json!({"route": route, "outcome": "delivered"}),
            RouteOutcome::Failed(reason) => {
                json!({"route": route, "outcome": "failed", "reason": reason})
            }
        })
        .collect();
    Value::Array(outcomes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_handle_is_an_illegal_state() {
        let handle = create();
        assert!(get(handle).is_ok());
        assert!(free(handle));
        assert!(!free(handle));
        assert!(matches!(get(handle), Err(BridgeError::IllegalState(_))));
    }

    #[test]
    fn outcomes_travel_as_json() {
        let delivery = PageDelivery::default();
        delivery.register_route("jcef");
        delivery.report("browser", RouteOutcome::Failed("no display".to_owned()));
        assert_eq!(
            outcomes_json(&delivery),
            r#"[{"route":"browser","outcome":"failed","reason":"no display"},{"route":"jcef","outcome":"pending"}]"#
        );
    }
}
