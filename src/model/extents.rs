//! The extent map: `chunk:page` → object and dbspace, built once from `oncheck -pe`.
