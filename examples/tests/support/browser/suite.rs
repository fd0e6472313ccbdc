//! A [`StudioPage`] carrying one browser suite's own helper methods.
//!
//! The browser suites share one test binary, so their helpers cannot all be inherent methods
//! of `StudioPage`: two suites' `open` would collide. Each suite names a marker type and adds
//! its methods to `SuitePage<ItsMarker>`, which derefs to the shared page.

use std::marker::PhantomData;
use std::ops::Deref;

use super::studio::StudioPage;

/// A studio page seen through the helpers of the suite marked `S`.
pub struct SuitePage<S> {
    page: StudioPage,
    suite: PhantomData<S>,
}

impl<S> SuitePage<S> {
    /// Starts a studio with a browser on `page`, as [`StudioPage::start`].
    pub async fn start(width: u32, height: u32, page: &str) -> Self {
        Self {
            page: StudioPage::start(width, height, page).await,
            suite: PhantomData,
        }
    }

    /// Closes the browser, then stops the studio, as [`StudioPage::close`].
    pub async fn close(self) {
        self.page.close().await;
    }
}

impl<S> Deref for SuitePage<S> {
    type Target = StudioPage;

    fn deref(&self) -> &StudioPage {
        &self.page
    }
}
