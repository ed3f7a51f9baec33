/* In a script file a probe description needs a predicate or actions after it (only -n BEGIN may stand alone). */
BEGIN
