short void p;
