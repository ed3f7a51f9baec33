struct in { int i; };
struct out { int o; };

translator struct out < struct in *p > { o = p->i; };
translator struct out < struct in *p > { o = p->i; };
