//! ULIDs that sort in the order this process made them (plain ULIDs made in the same
//! millisecond sort at random): the ids of memory versions and session events, whose
//! order is their history.

/// A ULID later than every one this function returned before.
pub fn ulid() -> ulid::Ulid {
    static GENERATOR: std::sync::Mutex<Option<ulid::Generator>> = std::sync::Mutex::new(None);
    let mut generator = GENERATOR.lock().unwrap_or_else(|p| p.into_inner());
    generator
        .get_or_insert_with(ulid::Generator::new)
        .generate()
        // the random part overflowed within one millisecond: wait for the next
        .unwrap_or_else(|_| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            ulid::Ulid::new()
        })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ulids_increase() {
        let ids: Vec<_> = (0..1000).map(|_| super::ulid()).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }
}
