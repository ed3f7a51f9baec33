/* A declared name may not name a module: dt_decl's D_DECL_SCOPE. */
int `xyz;
