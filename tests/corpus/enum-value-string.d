enum e { T = "str" };
