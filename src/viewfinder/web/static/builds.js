// The builds list: rows of builds still comparing update themselves.
import { watch } from "./live.js";

watch();
