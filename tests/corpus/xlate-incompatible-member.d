struct in { int i; char c; };
struct out { int o; char *s; };

translator struct out < struct in *p > { o = p->i; s = p->c; };
