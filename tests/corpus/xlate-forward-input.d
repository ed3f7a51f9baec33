/* An input struct no one declared is a forward declaration. */
struct out { int o; };

translator struct out < struct nowhere *p > { o = p->i; };
