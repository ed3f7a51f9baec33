/* An action called as a value has its arguments counted first, as DTrace cooks the call. */
BEGIN { progenyof(trace()); }
