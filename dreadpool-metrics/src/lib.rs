//! Rates, histograms, reports and export for dreadpool's counters (work in progress: see issue 4).
